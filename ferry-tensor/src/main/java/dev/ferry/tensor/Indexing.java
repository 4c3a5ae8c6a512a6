package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;

/** gather / scatter_add / index_select and their derivatives. */
final class Indexing {
    private Indexing() {
    }

    private static void requireIndex(Tensor index, String op) {
        if (index.dtype() != DType.INT64 && index.dtype() != DType.INT32) {
            throw new IllegalArgumentException(op + "(): Expected dtype int64 for index, got " + index.dtype());
        }
    }

    /** Walks every position of {@code shape} in row-major order. */
    private interface IndexVisitor {
        void visit(int[] pos);
    }

    private static void forEachIndex(int[] shape, IndexVisitor v) {
        int n = Shapes.numel(shape);
        int[] pos = new int[shape.length];
        for (int k = 0; k < n; k++) {
            v.visit(pos);
            for (int d = shape.length - 1; d >= 0; d--) {
                if (++pos[d] < shape[d]) {
                    break;
                }
                pos[d] = 0;
            }
        }
    }

    private static int offset(Tensor t, int[] pos, int dim, int replaced) {
        int o = t.storageOffset();
        int[] st = t.stridesRef();
        for (int d = 0; d < pos.length; d++) {
            o += (d == dim ? replaced : pos[d]) * st[d];
        }
        return o;
    }

    private static int checkedIndex(long i, int size, int dim) {
        if (i < -size || i >= size) {
            throw new IndexOutOfBoundsException("index " + i + " is out of bounds for dimension " + dim
                    + " with size " + size);
        }
        return (int) (i < 0 ? i + size : i);
    }

    static Tensor gather(Tensor t, int dim, Tensor index) {
        requireIndex(index, "gather");
        int d = Shapes.normalizeDim(dim, t.dim());
        if (index.dim() != t.dim()) {
            throw new IllegalArgumentException("Index tensor must have the same number of dimensions as input tensor");
        }
        Tensor out = Tensor.allocate(t.dtype(), index.shapeRef());
        Storage src = t.storage();
        Storage dst = out.storage();
        int size = t.shapeRef()[d];
        int[] k = {0};
        forEachIndex(index.shapeRef(), pos -> {
            int i = checkedIndex(index.getLong(pos), size, d);
            dst.setDouble(k[0]++, src.getDouble(offset(t, pos, d, i)));
        });
        int[] shape = t.shapeRef();
        return Grad.of("GatherBackward0", t).saving(index).record(out, g -> new Tensor[] {
                Tensors.zeros(g.dtype(), shape).scatterAdd(d, index, g)});
    }

    static Tensor scatterAdd(Tensor t, int dim, Tensor index, Tensor src) {
        requireIndex(index, "scatter_add");
        int d = Shapes.normalizeDim(dim, t.dim());
        Tensor out = Conversions.contiguousCopy(t, t.dtype());
        Storage s = src.storage();
        Storage o = out.storage();
        int size = t.shapeRef()[d];
        forEachIndex(index.shapeRef(), pos -> {
            int i = checkedIndex(index.getLong(pos), size, d);
            int at = offset(out, pos, d, i);
            o.setDouble(at, o.getDouble(at) + s.getDouble(offset(src, pos, -1, 0)));
        });
        return Grad.of("ScatterAddBackward0", t, src).saving(index).record(out, g -> new Tensor[] {
                g, src.requiresGrad() ? g.gather(d, index) : null});
    }

    static Tensor indexSelect(Tensor t, int dim, Tensor index) {
        requireIndex(index, "index_select");
        if (index.dim() > 1) {
            throw new IllegalArgumentException("index_select(): Index is supposed to be a vector");
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        long[] idx = index.toLongArray();
        int size = t.size(d);
        java.util.List<Tensor> rows = new java.util.ArrayList<>();
        Tensor td = t.detach();
        for (long i : idx) {
            rows.add(td.select(d, checkedIndex(i, size, d)));
        }
        int[] shape = t.shape();
        shape[d] = idx.length;
        Tensor out = idx.length == 0 ? Tensor.allocate(t.dtype(), shape) : ShapeOps.stack(rows, d);
        int[] original = t.shapeRef();
        return Grad.of("IndexSelectBackward0", t).saving(index).record(out, g -> {
            int[] idxShape = new int[g.dim()];
            java.util.Arrays.fill(idxShape, 1);
            idxShape[d] = idx.length;
            Tensor expanded = index.to(DType.INT64).reshape(idxShape).expand(g.shapeRef());
            return new Tensor[] {Tensors.zeros(g.dtype(), original).scatterAdd(d, expanded, g)};
        });
    }
}
