package dev.ferry.tensor;

import dev.ferry.tensor.autograd.AccumulateGrad;
import dev.ferry.tensor.autograd.Autograd;
import dev.ferry.tensor.autograd.Edge;
import dev.ferry.tensor.autograd.GradMode;
import dev.ferry.tensor.autograd.Node;
import dev.ferry.tensor.internal.Shapes;

import java.util.List;

/**
 * An n-dimensional array with autograd support, modelled on {@code torch.Tensor}.
 *
 * <p>A tensor is a view on a {@link Storage}: an offset, a shape and strides (in elements).
 * Shape ops ({@link #view}, {@link #transpose}, {@link #narrow}, {@link #expand}, ...) return
 * views that share the storage; arithmetic returns new tensors. Methods ending in {@code _}
 * modify the tensor in place. Binary ops broadcast like NumPy and promote dtypes like PyTorch.
 *
 * <p>Factories live in {@link Tensors}. The ops themselves are implemented in focused
 * package-private classes (element-wise, reductions, shape, indexing, linear algebra); this class
 * is their public face.
 *
 * <pre>
 * Tensor x = Tensors.randn(64, 256);
 * Tensor w = Tensors.randn(256, 10).requiresGrad_(true);
 * Tensor loss = x.matmul(w).relu().pow(2).mean();
 * loss.backward();
 * System.out.println(w.grad());
 * </pre>
 *
 * <p>Not thread-safe for concurrent mutation; concurrent reads of a tensor nobody writes are fine.
 *
 * <p>The only subclass is {@link Parameter}: ops rely on the fields here, so the hierarchy is sealed
 * (and, Ferry having no named module, the permitted subclass must share this package).
 */
public sealed class Tensor permits Parameter {
    private final Storage storage;
    private final int offset;
    private final int[] shape;
    private final int[] strides;

    private boolean requiresGrad;
    private Tensor grad;
    private Node gradFn;
    private int outputNr;
    private AccumulateGrad accumulator;

    Tensor(Storage storage, int offset, int[] shape, int[] strides) {
        this.storage = storage;
        this.offset = offset;
        this.shape = shape;
        this.strides = strides;
    }

    /** A new leaf sharing {@code data}'s storage and layout (for {@link Parameter}). */
    Tensor(Tensor data) {
        this(data.storage, data.offset, data.shape, data.strides);
    }

    /** A new contiguous, zero-filled tensor. */
    static Tensor allocate(DType dtype, int[] shape) {
        Shapes.checkShape(shape);
        return new Tensor(Storage.allocate(dtype, Shapes.numel(shape)), 0, shape.clone(),
                Shapes.contiguousStrides(shape));
    }

    // ------------------------------------------------------------------ metadata

    public DType dtype() {
        return storage.dtype();
    }

    /** The sizes of each dimension (a copy). */
    public int[] shape() {
        return shape.clone();
    }

    /** Size of dimension {@code dim} (negative counts from the end). */
    public int size(int dim) {
        return shape[Shapes.normalizeDim(dim, shape.length)];
    }

    /** Number of dimensions. */
    public int dim() {
        return shape.length;
    }

    public int numel() {
        return Shapes.numel(shape);
    }

    /** Strides in elements (a copy). */
    public int[] strides() {
        return strides.clone();
    }

    public int stride(int dim) {
        return strides[Shapes.normalizeDim(dim, shape.length)];
    }

    public int storageOffset() {
        return offset;
    }

    public Storage storage() {
        return storage;
    }

    public boolean isContiguous() {
        return Shapes.isContiguous(shape, strides);
    }

    /** The storage's in-place modification counter (see {@link Storage#version()}). */
    public int version() {
        return storage.version();
    }

    // Fast paths for ops in this package (no defensive copies).
    int[] shapeRef() {
        return shape;
    }

    int[] stridesRef() {
        return strides;
    }

    // ------------------------------------------------------------------ autograd

    public boolean requiresGrad() {
        return requiresGrad;
    }

    /**
     * Marks a leaf as needing gradients (returns {@code this}). Only floating tensors can require
     * grad, and only leaves can change the flag.
     */
    public Tensor requiresGrad_(boolean requiresGrad) {
        if (gradFn != null) {
            throw new IllegalStateException("you can only change requires_grad flags of leaf variables."
                    + (requiresGrad ? "" : " If you want to use a computed variable in a subgraph that doesn't"
                    + " require differentiation use var_no_grad = var.detach()."));
        }
        if (requiresGrad && !dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("only Tensors of floating point dtype can require gradients (got "
                    + dtype() + ")");
        }
        this.requiresGrad = requiresGrad;
        return this;
    }

    /** The accumulated gradient of a leaf, or null. */
    public Tensor grad() {
        return grad;
    }

    /** Replaces {@link #grad()} (null clears it). */
    public void setGrad(Tensor grad) {
        if (grad != null && !java.util.Arrays.equals(grad.shape, shape)) {
            throw new IllegalArgumentException("assigned grad has shape " + Shapes.str(grad.shape)
                    + " but the tensor has shape " + Shapes.str(shape));
        }
        this.grad = grad;
    }

    /** The node that produced this tensor, or null for a leaf. */
    public Node gradFn() {
        return gradFn;
    }

    /** True for tensors not produced by a recorded op (user-created, or not requiring grad). */
    public boolean isLeaf() {
        return gradFn == null;
    }

    /**
     * Where this tensor's gradient flows in the backward graph: its producing node, or for a leaf
     * that requires grad its {@link AccumulateGrad}. Null if it does not require grad.
     */
    public Edge gradientEdge() {
        if (!requiresGrad) {
            return null;
        }
        if (gradFn != null) {
            return new Edge(gradFn, outputNr);
        }
        if (accumulator == null) {
            accumulator = new AccumulateGrad(this);
        }
        return new Edge(accumulator, 0);
    }

    /**
     * A new tensor sharing this one's data whose gradient flows into output {@code outputNr} of
     * {@code node}. For code that builds graph nodes by hand (custom functions, distributed
     * autograd); ordinary ops record themselves.
     */
    public Tensor withGradFn(Node node, int outputNr) {
        if (!dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("only floating point tensors can have a grad_fn (got " + dtype() + ")");
        }
        Tensor t = new Tensor(storage, offset, shape, strides);
        t.setHistory(node, outputNr);
        return t;
    }

    void setHistory(Node node, int outputNr) {
        this.gradFn = node;
        this.outputNr = outputNr;
        this.requiresGrad = true;
    }

    /** Backward from a scalar: adds d(this)/d(leaf) to every leaf's {@code .grad}. */
    public void backward() {
        Autograd.backward(List.of(this), null, false, false);
    }

    /** Backward with an explicit gradient of this tensor (same shape). */
    public void backward(Tensor gradient) {
        backward(gradient, false);
    }

    /** Backward keeping saved tensors when {@code retainGraph} is true, so it can run again. */
    public void backward(Tensor gradient, boolean retainGraph) {
        Autograd.backward(List.of(this), gradient == null ? null : java.util.Collections.singletonList(gradient),
                retainGraph, false);
    }

    /** A view sharing the data but cut from the graph (does not require grad). */
    public Tensor detach() {
        return new Tensor(storage, offset, shape, strides);
    }

    // ------------------------------------------------------------------ element access and conversion

    /** The value of a one-element tensor as a double. */
    public double item() {
        requireOneElement();
        return storage.getDouble(offset);
    }

    /** The value of a one-element tensor as a long (floating values truncate). */
    public long itemLong() {
        requireOneElement();
        return storage.getLong(offset);
    }

    private void requireOneElement() {
        if (numel() != 1) {
            throw new IllegalStateException("a Tensor with " + numel() + " elements cannot be converted to Scalar");
        }
    }

    /** The element at a full index, as a double. */
    public double getDouble(int... index) {
        return storage.getDouble(elementOffset(index));
    }

    /** The element at a full index, as a long. */
    public long getLong(int... index) {
        return storage.getLong(elementOffset(index));
    }

    private int elementOffset(int[] index) {
        if (index.length != shape.length) {
            throw new IllegalArgumentException("expected " + shape.length + " indices but got " + index.length);
        }
        int o = offset;
        for (int d = 0; d < index.length; d++) {
            int i = index[d] < 0 ? index[d] + shape[d] : index[d];
            if (i < 0 || i >= shape[d]) {
                throw new IndexOutOfBoundsException("index " + index[d] + " is out of bounds for dimension " + d
                        + " with size " + shape[d]);
            }
            o += i * strides[d];
        }
        return o;
    }

    /** Elements in row-major order converted to float. */
    public float[] toFloatArray() {
        return (float[]) Conversions.contiguousCopy(this, DType.FLOAT32).storage.array();
    }

    /** Elements in row-major order converted to double. */
    public double[] toDoubleArray() {
        return (double[]) Conversions.contiguousCopy(this, DType.FLOAT64).storage.array();
    }

    /** Elements in row-major order converted to long. */
    public long[] toLongArray() {
        return (long[]) Conversions.contiguousCopy(this, DType.INT64).storage.array();
    }

    /** Elements in row-major order converted to boolean (non-zero is true). */
    public boolean[] toBooleanArray() {
        return (boolean[]) Conversions.contiguousCopy(this, DType.BOOL).storage.array();
    }

    /** This tensor converted to {@code dtype} (itself if it already has it). Differentiable. */
    public Tensor to(DType dtype) {
        return Conversions.to(this, dtype);
    }

    /** A copy with its own contiguous storage. Differentiable. */
    public Tensor clone() {
        return Conversions.cloneTensor(this);
    }

    /** Itself if contiguous, otherwise a contiguous copy. Differentiable. */
    public Tensor contiguous() {
        return isContiguous() ? this : clone();
    }

    // ------------------------------------------------------------------ element-wise

    public Tensor add(Tensor other) {
        return Elementwise.add(this, other, 1);
    }

    /** {@code this + alpha * other}. */
    public Tensor add(Tensor other, double alpha) {
        return Elementwise.add(this, other, alpha);
    }

    public Tensor add(double value) {
        return Elementwise.addScalar(this, value);
    }

    public Tensor sub(Tensor other) {
        return Elementwise.add(this, other, -1);
    }

    /** {@code this - alpha * other}. */
    public Tensor sub(Tensor other, double alpha) {
        return Elementwise.add(this, other, -alpha);
    }

    public Tensor sub(double value) {
        return Elementwise.addScalar(this, -value);
    }

    public Tensor mul(Tensor other) {
        return Elementwise.mul(this, other);
    }

    public Tensor mul(double value) {
        return Elementwise.mulScalar(this, value);
    }

    /** True division (integer inputs give a floating result). */
    public Tensor div(Tensor other) {
        return Elementwise.div(this, other);
    }

    public Tensor div(double value) {
        return Elementwise.divScalar(this, value);
    }

    public Tensor pow(double exponent) {
        return Elementwise.powScalar(this, exponent);
    }

    public Tensor pow(Tensor exponent) {
        return Elementwise.pow(this, exponent);
    }

    public Tensor maximum(Tensor other) {
        return Elementwise.maximum(this, other);
    }

    public Tensor minimum(Tensor other) {
        return Elementwise.minimum(this, other);
    }

    public Tensor neg() {
        return Elementwise.neg(this);
    }

    public Tensor abs() {
        return Elementwise.abs(this);
    }

    public Tensor exp() {
        return Elementwise.exp(this);
    }

    public Tensor log() {
        return Elementwise.log(this);
    }

    public Tensor log1p() {
        return Elementwise.log1p(this);
    }

    public Tensor sqrt() {
        return Elementwise.sqrt(this);
    }

    public Tensor square() {
        return Elementwise.mul(this, this);
    }

    public Tensor reciprocal() {
        return Elementwise.reciprocal(this);
    }

    public Tensor sin() {
        return Elementwise.sin(this);
    }

    public Tensor cos() {
        return Elementwise.cos(this);
    }

    public Tensor tanh() {
        return Elementwise.tanh(this);
    }

    public Tensor sigmoid() {
        return Elementwise.sigmoid(this);
    }

    /** The Gauss error function, {@code torch.erf}; integer inputs give float32. */
    public Tensor erf() {
        return Elementwise.erf(this);
    }

    public Tensor relu() {
        return Elementwise.relu(this);
    }

    /** -1, 0 or 1 per element (gradient zero). */
    public Tensor sign() {
        return Elementwise.sign(this);
    }

    public Tensor floor() {
        return Elementwise.floor(this);
    }

    public Tensor ceil() {
        return Elementwise.ceil(this);
    }

    /** Rounds half to even, as {@code torch.round}. */
    public Tensor round() {
        return Elementwise.round(this);
    }

    /** Limits each element to [min, max]; pass NaN to leave a side open. */
    public Tensor clamp(double min, double max) {
        return Elementwise.clamp(this, min, max);
    }

    public Tensor clampMin(double min) {
        return Elementwise.clamp(this, min, Double.NaN);
    }

    public Tensor clampMax(double max) {
        return Elementwise.clamp(this, Double.NaN, max);
    }

    public Tensor eq(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.EQ);
    }

    public Tensor ne(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.NE);
    }

    public Tensor lt(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.LT);
    }

    public Tensor le(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.LE);
    }

    public Tensor gt(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.GT);
    }

    public Tensor ge(Tensor other) {
        return Elementwise.compare(this, other, Elementwise.Cmp.GE);
    }

    public Tensor eq(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.EQ);
    }

    public Tensor ne(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.NE);
    }

    public Tensor lt(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.LT);
    }

    public Tensor le(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.LE);
    }

    public Tensor gt(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.GT);
    }

    public Tensor ge(double value) {
        return Elementwise.compare(this, Elementwise.scalarLike(this, value), Elementwise.Cmp.GE);
    }

    public Tensor logicalNot() {
        return Elementwise.logicalNot(this);
    }

    public Tensor logicalAnd(Tensor other) {
        return Elementwise.logical(this, other, true);
    }

    public Tensor logicalOr(Tensor other) {
        return Elementwise.logical(this, other, false);
    }

    /** Elements of this where {@code condition} is true, else of {@code other}. */
    public Tensor where(Tensor condition, Tensor other) {
        return Elementwise.where(condition, this, other);
    }

    /** A copy with {@code value} wherever {@code mask} is true. */
    public Tensor maskedFill(Tensor mask, double value) {
        return Elementwise.where(mask, Elementwise.scalarLike(this, value), this);
    }

    /** {@link #allclose(Tensor, double, double)} with PyTorch's defaults, rtol 1e-5 and atol 1e-8. */
    public boolean allclose(Tensor other) {
        return allclose(other, 1e-5, 1e-8);
    }

    /** True if every element is within {@code atol + rtol * |other|} of {@code other}. */
    public boolean allclose(Tensor other, double rtol, double atol) {
        return Elementwise.allclose(this, other, rtol, atol);
    }

    /** True if both have the same shape and elements (as {@code torch.equal}). */
    public boolean equal(Tensor other) {
        return Elementwise.equal(this, other);
    }

    // ------------------------------------------------------------------ in place (not recorded)

    /** {@code this += other}. Returns this. */
    public Tensor add_(Tensor other) {
        return InPlace.add(this, other, 1);
    }

    /** {@code this += alpha * other}. Returns this. */
    public Tensor add_(Tensor other, double alpha) {
        return InPlace.add(this, other, alpha);
    }

    public Tensor add_(double value) {
        return InPlace.addScalar(this, value);
    }

    public Tensor sub_(Tensor other) {
        return InPlace.add(this, other, -1);
    }

    public Tensor mul_(Tensor other) {
        return InPlace.mul(this, other);
    }

    public Tensor mul_(double value) {
        return InPlace.mulScalar(this, value);
    }

    public Tensor div_(double value) {
        return InPlace.mulScalar(this, 1.0 / value);
    }

    /** {@code this += value * t1 * t2}. */
    public Tensor addcmul_(Tensor t1, Tensor t2, double value) {
        return InPlace.addcmul(this, t1, t2, value);
    }

    /** {@code this += value * t1 / t2}. */
    public Tensor addcdiv_(Tensor t1, Tensor t2, double value) {
        return InPlace.addcdiv(this, t1, t2, value);
    }

    public Tensor zero_() {
        return InPlace.fill(this, 0);
    }

    public Tensor fill_(double value) {
        return InPlace.fill(this, value);
    }

    /** Copies {@code src} (broadcast, converted) into this. */
    public Tensor copy_(Tensor src) {
        return InPlace.copy(this, src);
    }

    public Tensor clamp_(double min, double max) {
        return InPlace.clamp(this, min, max);
    }

    /** Fills with uniform values in [from, to). */
    public Tensor uniform_(double from, double to, Generator generator) {
        return InPlace.uniform(this, from, to, generator);
    }

    /** Fills with normal values. */
    public Tensor normal_(double mean, double std, Generator generator) {
        return InPlace.normal(this, mean, std, generator);
    }

    // ------------------------------------------------------------------ reductions

    /** Sum of all elements (0-dim). */
    public Tensor sum() {
        return Reductions.sum(this, new int[0], false);
    }

    public Tensor sum(int dim) {
        return Reductions.sum(this, new int[] {dim}, false);
    }

    public Tensor sum(int dim, boolean keepDim) {
        return Reductions.sum(this, new int[] {dim}, keepDim);
    }

    public Tensor sum(int[] dims, boolean keepDim) {
        return Reductions.sum(this, dims, keepDim);
    }

    public Tensor mean() {
        return Reductions.mean(this, allDims(), false);
    }

    public Tensor mean(int dim) {
        return Reductions.mean(this, new int[] {dim}, false);
    }

    public Tensor mean(int dim, boolean keepDim) {
        return Reductions.mean(this, new int[] {dim}, keepDim);
    }

    public Tensor mean(int[] dims, boolean keepDim) {
        return Reductions.mean(this, dims, keepDim);
    }

    /** Variance; {@code correction} 1 is the unbiased estimator (PyTorch's default). */
    public Tensor var(int[] dims, int correction, boolean keepDim) {
        return Reductions.var(this, dims, correction, keepDim);
    }

    /** Unbiased variance of all elements. */
    public Tensor var() {
        return Reductions.var(this, allDims(), 1, false);
    }

    /** Square root of {@link #var(int[], int, boolean)}; where it is 0 the gradient is 0, as in PyTorch. */
    public Tensor std(int[] dims, int correction, boolean keepDim) {
        return Reductions.std(this, dims, correction, keepDim);
    }

    /** Unbiased standard deviation of all elements. */
    public Tensor std() {
        return Reductions.std(this, allDims(), 1, false);
    }

    /** Product of all elements. */
    public Tensor prod() {
        return Reductions.prod(this);
    }

    /** Largest element (0-dim). */
    public Tensor max() {
        return Reductions.extremumOfAll(this, true);
    }

    public Tensor min() {
        return Reductions.extremumOfAll(this, false);
    }

    /** Largest values along {@code dim} and their indices. */
    public ValuesIndices max(int dim, boolean keepDim) {
        return Reductions.maxWithIndices(this, dim, keepDim, true);
    }

    public ValuesIndices min(int dim, boolean keepDim) {
        return Reductions.maxWithIndices(this, dim, keepDim, false);
    }

    public Tensor amax(int[] dims, boolean keepDim) {
        return Reductions.amax(this, dims, keepDim, true);
    }

    public Tensor amin(int[] dims, boolean keepDim) {
        return Reductions.amax(this, dims, keepDim, false);
    }

    /** Index of the largest element of the flattened tensor (int64, 0-dim). */
    public Tensor argmax() {
        return reshape(-1).max(0, false).indices();
    }

    public Tensor argmax(int dim, boolean keepDim) {
        return max(dim, keepDim).indices();
    }

    public Tensor argmin(int dim, boolean keepDim) {
        return min(dim, keepDim).indices();
    }

    /** {@code log(sum(exp(x)))} along {@code dim}, computed stably. */
    public Tensor logsumexp(int dim, boolean keepDim) {
        return Reductions.logsumexp(this, dim, keepDim);
    }

    /** Euclidean norm of all elements; at a zero tensor the gradient is 0, as in PyTorch. */
    public Tensor norm() {
        return Reductions.norm(this);
    }

    public Tensor softmax(int dim) {
        return Reductions.softmax(this, dim, false);
    }

    public Tensor logSoftmax(int dim) {
        return Reductions.softmax(this, dim, true);
    }

    private int[] allDims() {
        int[] d = new int[shape.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = i;
        }
        return d;
    }

    // ------------------------------------------------------------------ shape (views where possible)

    /** A view with a new shape (one entry may be -1); fails if the strides do not allow it. */
    public Tensor view(int... newShape) {
        return ShapeOps.view(this, newShape);
    }

    /** {@link #view} if possible, otherwise a copy with the new shape. */
    public Tensor reshape(int... newShape) {
        return ShapeOps.reshape(this, newShape);
    }

    public Tensor flatten() {
        return reshape(-1);
    }

    /** Merges dims {@code startDim..endDim} into one. */
    public Tensor flatten(int startDim, int endDim) {
        return ShapeOps.flatten(this, startDim, endDim);
    }

    /** Removes all size-1 dims. */
    public Tensor squeeze() {
        return ShapeOps.squeeze(this, -1, true);
    }

    /** Removes {@code dim} if its size is 1. */
    public Tensor squeeze(int dim) {
        return ShapeOps.squeeze(this, dim, false);
    }

    public Tensor unsqueeze(int dim) {
        return ShapeOps.unsqueeze(this, dim);
    }

    public Tensor permute(int... dims) {
        return ShapeOps.permute(this, dims);
    }

    public Tensor transpose(int dim0, int dim1) {
        return ShapeOps.transpose(this, dim0, dim1);
    }

    /** Transpose of a tensor with at most 2 dims. */
    public Tensor t() {
        if (shape.length > 2) {
            throw new IllegalArgumentException("t() expects a tensor with <= 2 dimensions, but self is "
                    + shape.length + "D");
        }
        return shape.length < 2 ? this : transpose(0, 1);
    }

    /** A broadcast view (size -1 keeps a dim); no data is copied. */
    public Tensor expand(int... newShape) {
        return ShapeOps.expand(this, newShape);
    }

    public Tensor expandAs(Tensor other) {
        return ShapeOps.expand(this, other.shape);
    }

    /**
     * The view {@code [start, start+length)} along {@code dim}; a negative {@code start} counts
     * from the end, as in PyTorch.
     *
     * @throws IndexOutOfBoundsException if {@code start} is outside {@code [-size, size]}
     * @throws IllegalArgumentException  if {@code length} is negative or the range runs past the end
     */
    public Tensor narrow(int dim, int start, int length) {
        return ShapeOps.narrow(this, dim, start, length);
    }

    /** Python's {@code x[..., start:end:step, ...]} along {@code dim}; bounds are clamped. */
    public Tensor slice(int dim, int start, int end, int step) {
        return ShapeOps.slice(this, dim, start, end, step);
    }

    /** The view at {@code index} along {@code dim}, which is removed. */
    public Tensor select(int dim, int index) {
        return ShapeOps.select(this, dim, index);
    }

    /** {@code x[i0][i1]...}: selects along the leading dims. */
    public Tensor get(int... indices) {
        Tensor t = this;
        for (int i : indices) {
            t = t.select(0, i);
        }
        return t;
    }

    /** Splits into pieces of {@code size} along {@code dim} (the last may be smaller). */
    public List<Tensor> split(int size, int dim) {
        return ShapeOps.split(this, size, dim);
    }

    /**
     * Splits into {@code chunks} nearly equal pieces along {@code dim} (fewer when the dimension is
     * shorter).
     *
     * @throws IllegalArgumentException if {@code chunks} is not positive
     */
    public List<Tensor> chunk(int chunks, int dim) {
        if (chunks <= 0) {
            throw new IllegalArgumentException("chunk expects `chunks` to be greater than 0, got: " + chunks);
        }
        int n = size(dim);
        return split(Math.max(1, (n + chunks - 1) / chunks), dim);
    }

    // ------------------------------------------------------------------ indexing

    /** {@code out[i][j] = this[index[i][j]][j]} for dim 0, and so on. Differentiable w.r.t. this. */
    public Tensor gather(int dim, Tensor index) {
        return Indexing.gather(this, dim, index);
    }

    /** Rows (slices along {@code dim}) picked by a 1-D int64 index. Differentiable w.r.t. this. */
    public Tensor indexSelect(int dim, Tensor index) {
        return Indexing.indexSelect(this, dim, index);
    }

    /** A copy of this with {@code src} added at {@code index} along {@code dim} (see torch.scatter_add). */
    public Tensor scatterAdd(int dim, Tensor index, Tensor src) {
        return Indexing.scatterAdd(this, dim, index, src);
    }

    // ------------------------------------------------------------------ linear algebra

    /** Matrix product with {@code torch.matmul}'s rules for 1-D, 2-D and batched operands. */
    public Tensor matmul(Tensor other) {
        return Linalg.matmul(this, other);
    }

    /** Product of two matrices. */
    public Tensor mm(Tensor other) {
        return Linalg.mm(this, other);
    }

    /** Batched product of [b,n,k] and [b,k,m]. */
    public Tensor bmm(Tensor other) {
        return Linalg.bmm(this, other);
    }

    /** Matrix-vector product. */
    public Tensor mv(Tensor vector) {
        return Linalg.matmul(this, vector);
    }

    /** Dot product of two 1-D tensors. */
    public Tensor dot(Tensor other) {
        return Linalg.dot(this, other);
    }

    // ------------------------------------------------------------------ printing

    /** PyTorch's format, e.g. {@code tensor([[1., 2.], [3., 4.]], requires_grad=True)}. */
    @Override
    public String toString() {
        return TensorFormatter.format(this);
    }

    static boolean gradEnabled() {
        return GradMode.isEnabled();
    }
}
