package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.CopyKernels;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Views (shape/stride changes sharing storage), concatenation, and their derivatives. */
final class ShapeOps {
    private ShapeOps() {
    }

    private static Tensor viewOf(Tensor t, int offset, int[] shape, int[] strides) {
        return new Tensor(t.storage(), offset, shape, strides);
    }

    static Tensor view(Tensor t, int[] newShape) {
        int[] shape = Shapes.inferSize(newShape, t.numel());
        int[] strides = computeViewStrides(t.shapeRef(), t.stridesRef(), shape);
        if (strides == null) {
            throw new IllegalArgumentException("view size is not compatible with input tensor's size and stride (at"
                    + " least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
        }
        return recordReshape(t, viewOf(t, t.storageOffset(), shape, strides), "ViewBackward0");
    }

    static Tensor reshape(Tensor t, int[] newShape) {
        int[] shape = Shapes.inferSize(newShape, t.numel());
        int[] strides = computeViewStrides(t.shapeRef(), t.stridesRef(), shape);
        if (strides != null) {
            return recordReshape(t, viewOf(t, t.storageOffset(), shape, strides), "ViewBackward0");
        }
        Tensor copy = Conversions.contiguousCopy(t, t.dtype());
        return recordReshape(t, viewOf(copy, 0, shape, Shapes.contiguousStrides(shape)), "ReshapeAliasBackward0");
    }

    private static Tensor recordReshape(Tensor t, Tensor out, String name) {
        int[] original = t.shapeRef();
        return Grad.of(name, t).record(out, g -> new Tensor[] {g.reshape(original)});
    }

    /** Strides for viewing (shape, strides) as newShape without copying, or null (ATen's computeStride). */
    private static int[] computeViewStrides(int[] oldShape, int[] oldStrides, int[] newShape) {
        if (oldShape.length == 0 || Shapes.numel(oldShape) == 0 || Shapes.isContiguous(oldShape, oldStrides)) {
            return Shapes.contiguousStrides(newShape);
        }
        int[] newStrides = new int[newShape.length];
        int viewD = newShape.length - 1;
        int chunkBaseStride = oldStrides[oldStrides.length - 1];
        long tensorNumel = 1;
        long viewNumel = 1;
        for (int tensorD = oldShape.length - 1; tensorD >= 0; tensorD--) {
            tensorNumel *= oldShape[tensorD];
            if (tensorD == 0 || (oldShape[tensorD - 1] != 1
                    && oldStrides[tensorD - 1] != tensorNumel * chunkBaseStride)) {
                while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
                    newStrides[viewD] = (int) (viewNumel * chunkBaseStride);
                    viewNumel *= newShape[viewD];
                    viewD--;
                }
                if (viewNumel != tensorNumel) {
                    return null;
                }
                if (tensorD > 0) {
                    chunkBaseStride = oldStrides[tensorD - 1];
                    tensorNumel = 1;
                    viewNumel = 1;
                }
            }
        }
        return viewD == -1 ? newStrides : null;
    }

    static Tensor flatten(Tensor t, int startDim, int endDim) {
        if (t.dim() == 0) {
            return t.reshape(1);
        }
        int s = Shapes.normalizeDim(startDim, t.dim());
        int e = Shapes.normalizeDim(endDim, t.dim());
        if (s > e) {
            throw new IllegalArgumentException("flatten() has invalid args: start_dim cannot come after end_dim");
        }
        int[] shape = t.shapeRef();
        int[] out = new int[shape.length - (e - s)];
        int k = 0;
        for (int d = 0; d < shape.length; d++) {
            if (d <= s || d > e) {
                out[k++] = shape[d];
            } else {
                out[k - 1] *= shape[d];
            }
        }
        return reshape(t, out);
    }

    static Tensor squeeze(Tensor t, int dim, boolean all) {
        int[] shape = t.shapeRef();
        int[] strides = t.stridesRef();
        int d = all || t.dim() == 0 ? -1 : Shapes.normalizeDim(dim, t.dim());
        int[] ns = new int[shape.length];
        int[] nst = new int[shape.length];
        int k = 0;
        for (int i = 0; i < shape.length; i++) {
            boolean drop = shape[i] == 1 && (all || i == d);
            if (!drop) {
                ns[k] = shape[i];
                nst[k++] = strides[i];
            }
        }
        Tensor out = viewOf(t, t.storageOffset(), Arrays.copyOf(ns, k), Arrays.copyOf(nst, k));
        return recordReshape(t, out, "SqueezeBackward0");
    }

    static Tensor unsqueeze(Tensor t, int dim) {
        int d = Shapes.normalizeDim(dim, t.dim() + 1);
        int[] shape = t.shapeRef();
        int[] strides = t.stridesRef();
        int[] ns = new int[shape.length + 1];
        int[] nst = new int[shape.length + 1];
        for (int i = 0, j = 0; i < ns.length; i++) {
            if (i == d) {
                ns[i] = 1;
                nst[i] = j < shape.length ? strides[j] * shape[j] : 1;
            } else {
                ns[i] = shape[j];
                nst[i] = strides[j++];
            }
        }
        Tensor out = viewOf(t, t.storageOffset(), ns, nst);
        return Grad.of("UnsqueezeBackward0", t).record(out, g -> new Tensor[] {g.squeeze(d)});
    }

    static Tensor permute(Tensor t, int[] dims) {
        int n = t.dim();
        if (dims.length != n) {
            throw new IllegalArgumentException("permute(): number of dimensions in the tensor input does not"
                    + " match the length of the desired ordering of dimensions i.e. input.dim() = "
                    + n + " is not equal to len(dims) = " + dims.length);
        }
        int[] perm = new int[n];
        boolean[] seen = new boolean[n];
        int[] shape = new int[n];
        int[] strides = new int[n];
        for (int i = 0; i < n; i++) {
            perm[i] = Shapes.normalizeDim(dims[i], n);
            if (seen[perm[i]]) {
                throw new IllegalArgumentException("permute(): duplicate dims are not allowed.");
            }
            seen[perm[i]] = true;
            shape[i] = t.shapeRef()[perm[i]];
            strides[i] = t.stridesRef()[perm[i]];
        }
        int[] inverse = new int[n];
        for (int i = 0; i < n; i++) {
            inverse[perm[i]] = i;
        }
        Tensor out = viewOf(t, t.storageOffset(), shape, strides);
        return Grad.of("PermuteBackward0", t).record(out, g -> new Tensor[] {g.permute(inverse)});
    }

    static Tensor transpose(Tensor t, int dim0, int dim1) {
        if (t.dim() == 0) {
            return Grad.of("TransposeBackward0", t).record(viewOf(t, t.storageOffset(), new int[0], new int[0]),
                    g -> new Tensor[] {g});
        }
        int a = Shapes.normalizeDim(dim0, t.dim());
        int b = Shapes.normalizeDim(dim1, t.dim());
        int[] shape = t.shape();
        int[] strides = t.strides();
        int tmp = shape[a];
        shape[a] = shape[b];
        shape[b] = tmp;
        tmp = strides[a];
        strides[a] = strides[b];
        strides[b] = tmp;
        Tensor out = viewOf(t, t.storageOffset(), shape, strides);
        return Grad.of("TransposeBackward0", t).record(out, g -> new Tensor[] {g.transpose(a, b)});
    }

    static Tensor expand(Tensor t, int[] newShape) {
        int[] shape = t.shapeRef();
        if (newShape.length < shape.length) {
            throw new IllegalArgumentException("expand(" + Shapes.str(shape) + ", size=" + Shapes.str(newShape)
                    + "): the number of sizes provided (" + newShape.length + ") must be greater or equal to the number"
                    + " of dimensions in the tensor (" + shape.length + ")");
        }
        int lead = newShape.length - shape.length;
        int[] outShape = new int[newShape.length];
        int[] strides = new int[newShape.length];
        for (int i = 0; i < newShape.length; i++) {
            int j = i - lead;
            int size = newShape[i];
            if (j < 0) {
                if (size < 0) {
                    throw new IllegalArgumentException("The expanded size of the tensor (-1) isn't allowed in a leading,"
                            + " non-existing dimension " + i);
                }
                outShape[i] = size;
                strides[i] = 0;
            } else if (size == -1 || size == shape[j]) {
                outShape[i] = shape[j];
                strides[i] = t.stridesRef()[j];
            } else if (shape[j] == 1) {
                outShape[i] = size;
                strides[i] = 0;
            } else {
                throw new IllegalArgumentException("The expanded size of the tensor (" + size + ") must match the existing"
                        + " size (" + shape[j] + ") at non-singleton dimension " + i + ".  Target sizes: "
                        + Shapes.str(newShape) + ".  Tensor sizes: " + Shapes.str(shape));
            }
        }
        if (Arrays.equals(outShape, shape)) {
            return t;
        }
        Tensor out = viewOf(t, t.storageOffset(), outShape, strides);
        return Grad.of("ExpandBackward0", t).record(out, g -> new Tensor[] {Elementwise.reduceTo(g, shape)});
    }

    /**
     * PyTorch's narrow checks: unlike slice, which clamps, a range that does not fit is an error,
     * and a negative start counts from the end (slice(-1, -1 + length) would be empty).
     */
    static Tensor narrow(Tensor t, int dim, int start, int length) {
        if (t.dim() == 0) {
            throw new IllegalArgumentException("narrow() cannot be applied to a 0-dim tensor.");
        }
        if (length < 0) {
            throw new IllegalArgumentException("narrow(): length must be non-negative.");
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        int size = t.shapeRef()[d];
        if (start < -size || start > size) {
            throw new IndexOutOfBoundsException("start out of range (expected to be in range of [" + -size + ", " + size
                    + "], but got " + start + ")");
        }
        int s = start < 0 ? start + size : start;
        if (s > size - length) {
            throw new IllegalArgumentException("start (" + s + ") + length (" + length + ") exceeds dimension size ("
                    + size + ").");
        }
        return slice(t, d, s, s + length, 1);
    }

    static Tensor slice(Tensor t, int dim, int start, int end, int step) {
        if (t.dim() == 0) {
            throw new IllegalArgumentException("slice() cannot be applied to a 0-dim tensor.");
        }
        if (step <= 0) {
            throw new IllegalArgumentException("slice step must be positive, got " + step);
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        int size = t.shapeRef()[d];
        int s = clampIndex(start, size);
        int e = Math.max(s, clampIndex(end, size));
        int[] shape = t.shape();
        int[] strides = t.strides();
        shape[d] = (e - s + step - 1) / step;
        strides[d] *= step;
        Tensor out = viewOf(t, t.storageOffset() + s * t.stridesRef()[d], shape, strides);
        int[] original = t.shapeRef();
        return Grad.of("SliceBackward0", t).record(out, g -> {
            Tensor z = Tensors.zeros(g.dtype(), original);
            return new Tensor[] {sliceScatter(z, g, d, s, step)};
        });
    }

    private static int clampIndex(int i, int size) {
        if (i < 0) {
            i += size;
        }
        return Math.max(0, Math.min(size, i));
    }

    /** {@code base} with {@code src} written into base[..., start::step, ...] (differentiable in src). */
    private static Tensor sliceScatter(Tensor base, Tensor src, int d, int start, int step) {
        Tensor out = base.detach().clone();
        int[] shape = out.shape();
        int[] strides = out.strides();
        shape[d] = src.shapeRef()[d];
        strides[d] *= step;
        CopyKernels.copy(src, viewOf(out, start * out.stridesRef()[d], shape, strides));
        return Grad.of("SliceScatterBackward0", src).record(out, g -> new Tensor[] {
                g.slice(d, start, start + (src.shapeRef()[d] - 1) * step + 1, step)});
    }

    static Tensor select(Tensor t, int dim, int index) {
        if (t.dim() == 0) {
            throw new IllegalArgumentException("select() cannot be applied to a 0-dim tensor.");
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        int size = t.shapeRef()[d];
        if (index < -size || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " is out of bounds for dimension " + d
                    + " with size " + size);
        }
        int i = index < 0 ? index + size : index;
        return slice(t, d, i, i + 1, 1).squeeze(d);
    }

    static List<Tensor> split(Tensor t, int size, int dim) {
        if (size <= 0) {
            throw new IllegalArgumentException("split expects split_size be positive, but got split_size=" + size);
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        List<Tensor> parts = new ArrayList<>();
        for (int s = 0; s < t.size(d); s += size) {
            parts.add(t.narrow(d, s, Math.min(size, t.size(d) - s)));
        }
        return parts;
    }

    static Tensor cat(List<Tensor> tensors, int dim) {
        if (tensors.isEmpty()) {
            throw new IllegalArgumentException("torch.cat(): expected a non-empty list of Tensors");
        }
        Tensor first = tensors.get(0);
        if (first.dim() == 0) {
            throw new IllegalArgumentException("zero-dimensional tensor (at position 0) cannot be concatenated");
        }
        int d = Shapes.normalizeDim(dim, first.dim());
        DType dt = first.dtype();
        int total = 0;
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            dt = DType.promote(dt, t.dtype());
            if (t.dim() != first.dim()) {
                throw new IllegalArgumentException("Tensors must have same number of dimensions: got " + first.dim()
                        + " and " + t.dim());
            }
            for (int k = 0; k < t.dim(); k++) {
                if (k != d && t.shapeRef()[k] != first.shapeRef()[k]) {
                    throw new IllegalArgumentException("Sizes of tensors must match except in dimension " + d
                            + ". Expected size " + first.shapeRef()[k] + " but got size " + t.shapeRef()[k]
                            + " for tensor number " + i + " in the list.");
                }
            }
            total += t.shapeRef()[d];
        }
        int[] shape = first.shape();
        shape[d] = total;
        Tensor out = Tensor.allocate(dt, shape);
        int[] sizes = new int[tensors.size()];
        int offset = 0;
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            sizes[i] = t.shapeRef()[d];
            int[] partShape = out.shape();
            partShape[d] = sizes[i];
            CopyKernels.copy(t, viewOf(out, offset * out.stridesRef()[d], partShape, out.strides()));
            offset += sizes[i];
        }
        return Grad.of("CatBackward0", tensors.toArray(new Tensor[0])).record(out, g -> {
            Tensor[] grads = new Tensor[sizes.length];
            int o = 0;
            for (int i = 0; i < sizes.length; i++) {
                grads[i] = g.narrow(d, o, sizes[i]);
                o += sizes[i];
            }
            return grads;
        });
    }

    static Tensor stack(List<Tensor> tensors, int dim) {
        if (tensors.isEmpty()) {
            throw new IllegalArgumentException("stack expects a non-empty TensorList");
        }
        int d = Shapes.normalizeDim(dim, tensors.get(0).dim() + 1);
        List<Tensor> parts = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            if (!Arrays.equals(tensors.get(i).shapeRef(), tensors.get(0).shapeRef())) {
                throw new IllegalArgumentException("stack expects each tensor to be equal size, but got "
                        + Shapes.str(tensors.get(0).shapeRef()) + " at entry 0 and "
                        + Shapes.str(tensors.get(i).shapeRef()) + " at entry " + i);
            }
            parts.add(tensors.get(i).unsqueeze(d));
        }
        return cat(parts, d);
    }
}
