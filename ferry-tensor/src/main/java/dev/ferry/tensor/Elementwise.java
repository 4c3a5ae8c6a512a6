package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.BinaryKernels;
import dev.ferry.tensor.internal.kernels.BinaryOp;
import dev.ferry.tensor.internal.kernels.StridedLoop;
import dev.ferry.tensor.internal.kernels.UnaryKernels;
import dev.ferry.tensor.internal.kernels.UnaryOp;

/** Element-wise ops with broadcasting, type promotion and their derivatives. */
final class Elementwise {
    private Elementwise() {
    }

    enum Cmp {
        EQ(BinaryOp.EQ), NE(BinaryOp.NE), LT(BinaryOp.LT), LE(BinaryOp.LE), GT(BinaryOp.GT), GE(BinaryOp.GE);

        final BinaryOp op;

        Cmp(BinaryOp op) {
            this.op = op;
        }
    }

    /** A 0-dim tensor holding {@code value} in the dtype {@code t op value} computes in. */
    static Tensor scalarLike(Tensor t, double value) {
        boolean floating = value != Math.rint(value) || Double.isInfinite(value);
        DType dt = DType.promoteWithScalar(t.dtype(), floating || t.dtype().isFloatingPoint());
        if (!floating && !t.dtype().isFloatingPoint() && t.dtype() != DType.BOOL) {
            dt = t.dtype();
        }
        Tensor s = Tensor.allocate(dt, new int[0]);
        s.storage().setDouble(0, value);
        return s;
    }

    /** Runs a binary kernel in {@code computeType}, converting inputs as needed. */
    private static Tensor binary(BinaryOp op, Tensor a, Tensor b, DType computeType, double alpha) {
        return binary(op.name().toLowerCase(java.util.Locale.ROOT), op, a, b, computeType, alpha);
    }

    /** As above; {@code name} is the op as users called it, for error messages. */
    private static Tensor binary(String name, BinaryOp op, Tensor a, Tensor b, DType computeType, double alpha) {
        int[] shape = Shapes.broadcast(name, a.shapeRef(), b.shapeRef());
        Tensor x = a.dtype() == computeType ? a : Conversions.contiguousCopy(a, computeType);
        Tensor y = b.dtype() == computeType ? b : Conversions.contiguousCopy(b, computeType);
        Tensor out = Tensor.allocate(op.isComparison() ? DType.BOOL : computeType, shape);
        BinaryKernels.run(op, x, y, out, alpha);
        return out;
    }

    private static DType arithmeticType(Tensor a, Tensor b) {
        DType dt = DType.promote(a.dtype(), b.dtype());
        return dt == DType.BOOL ? DType.INT64 : dt;
    }

    /** Sums a broadcast gradient back down to {@code shape}. */
    static Tensor reduceTo(Tensor g, int[] shape) {
        int[] gs = g.shapeRef();
        if (java.util.Arrays.equals(gs, shape)) {
            return g;
        }
        int lead = gs.length - shape.length;
        int count = 0;
        int[] dims = new int[gs.length];
        for (int i = 0; i < gs.length; i++) {
            if (i < lead || (shape[i - lead] == 1 && gs[i] != 1)) {
                dims[count++] = i;
            }
        }
        Tensor r = g.sum(java.util.Arrays.copyOf(dims, count), true);
        return r.reshape(shape);
    }

    static Tensor add(Tensor a, Tensor b, double alpha) {
        if (alpha < 0 && a.dtype() == DType.BOOL && b.dtype() == DType.BOOL) {
            throw new IllegalArgumentException("Subtraction, the `-` operator, with two bool tensors is not supported."
                    + " If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
        }
        Tensor out = binary(alpha < 0 ? "sub" : "add", BinaryOp.ADD, a, b, arithmeticType(a, b), alpha);
        return Grad.of(alpha == 1 ? "AddBackward0" : (alpha == -1 ? "SubBackward0" : "AddBackward0"), a, b)
                .record(out, g -> new Tensor[] {
                        reduceTo(g, a.shapeRef()),
                        reduceTo(alpha == 1 ? g : g.mul(alpha), b.shapeRef())});
    }

    static Tensor addScalar(Tensor a, double value) {
        Tensor s = scalarLike(a, value);
        Tensor out = binary(BinaryOp.ADD, a, s, DType.promote(a.dtype(), s.dtype()), 1);
        return Grad.of("AddBackward1", a).record(out, g -> new Tensor[] {g});
    }

    static Tensor mul(Tensor a, Tensor b) {
        Tensor out = binary(BinaryOp.MUL, a, b, arithmeticType(a, b), 1);
        return Grad.of("MulBackward0", a, b).saving(Grad.readFor(b, a), Grad.readFor(a, b)).record(out, g -> new Tensor[] {
                a.requiresGrad() ? reduceTo(g.mul(b), a.shapeRef()) : null,
                b.requiresGrad() ? reduceTo(g.mul(a), b.shapeRef()) : null});
    }

    static Tensor mulScalar(Tensor a, double value) {
        Tensor s = scalarLike(a, value);
        Tensor out = binary(BinaryOp.MUL, a, s, DType.promote(a.dtype(), s.dtype()), 1);
        return Grad.of("MulBackward1", a).record(out, g -> new Tensor[] {g.mul(value)});
    }

    static Tensor div(Tensor a, Tensor b) {
        DType dt = arithmeticType(a, b);
        if (!dt.isFloatingPoint()) {
            dt = DType.FLOAT32;
        }
        Tensor out = binary(BinaryOp.DIV, a, b, dt, 1);
        return Grad.of("DivBackward0", a, b).saving(a, b).record(out, g -> new Tensor[] {
                a.requiresGrad() ? reduceTo(g.div(b), a.shapeRef()) : null,
                b.requiresGrad() ? reduceTo(g.neg().mul(a).div(b.mul(b)), b.shapeRef()) : null});
    }

    static Tensor divScalar(Tensor a, double value) {
        DType dt = a.dtype().isFloatingPoint() ? a.dtype() : DType.FLOAT32;
        Tensor s = Tensor.allocate(dt, new int[0]);
        s.storage().setDouble(0, value);
        Tensor out = binary(BinaryOp.DIV, a, s, dt, 1);
        return Grad.of("DivBackward1", a).record(out, g -> new Tensor[] {g.div(value)});
    }

    static Tensor powScalar(Tensor a, double exponent) {
        Tensor s = scalarLike(a, exponent);
        Tensor out;
        if (exponent == 2 && a.dtype().isFloatingPoint()) {
            out = binary(BinaryOp.MUL, a, a, a.dtype(), 1);
        } else {
            out = binary(BinaryOp.POW, a, s, DType.promote(a.dtype(), s.dtype()), 1);
        }
        return Grad.of("PowBackward0", a).saving(a).record(out, g -> new Tensor[] {
                exponent == 0 ? g.mul(0) : g.mul(a.pow(exponent - 1).mul(exponent))});
    }

    static Tensor pow(Tensor a, Tensor b) {
        DType dt = arithmeticType(a, b);
        Tensor out = binary(BinaryOp.POW, a, b, dt, 1);
        // PyTorch's pow_backward_self / pow_backward_exponent: the base's derivative is 0 where the
        // exponent is 0 (b * a^(b-1) would be 0 * inf = NaN at a = 0), and the exponent's is 0
        // where a = 0 and b >= 0 (a^b * log(a) would be 0 * -inf = NaN, or -inf at b = 0).
        return Grad.of("PowBackward1", a, b).saving(a, b, out).record(out, g -> new Tensor[] {
                a.requiresGrad() ? reduceTo(g.mul(b.mul(a.pow(b.sub(1))).maskedFill(b.eq(0), 0)), a.shapeRef())
                        : null,
                b.requiresGrad() ? reduceTo(g.mul(out.mul(a.log()).maskedFill(a.eq(0).logicalAnd(b.ge(0)), 0)),
                        b.shapeRef()) : null});
    }

    static Tensor maximum(Tensor a, Tensor b) {
        return minMax(a, b, true);
    }

    static Tensor minimum(Tensor a, Tensor b) {
        return minMax(a, b, false);
    }

    private static Tensor minMax(Tensor a, Tensor b, boolean max) {
        Tensor out = binary(max ? BinaryOp.MAX : BinaryOp.MIN, a, b, arithmeticType(a, b), 1);
        // Ties split the gradient evenly, as PyTorch does; where a comparison fails (a NaN on
        // either side, so the result is NaN) both inputs get the whole gradient, as in PyTorch,
        // so the NaN reaches both instead of only one.
        return Grad.of(max ? "MaximumBackward0" : "MinimumBackward0", a, b).saving(a, b).record(out, g -> {
            Tensor halfTie = a.eq(b).to(g.dtype()).mul(0.5);
            Tensor wa = (max ? a.lt(b) : a.gt(b)).to(g.dtype()).add(halfTie).neg().add(1);
            Tensor wb = (max ? a.gt(b) : a.lt(b)).to(g.dtype()).add(halfTie).neg().add(1);
            return new Tensor[] {
                    reduceTo(g.mul(wa), a.shapeRef()),
                    reduceTo(g.mul(wb), b.shapeRef())};
        });
    }

    static Tensor compare(Tensor a, Tensor b, Cmp cmp) {
        return binary(cmp.op, a, b, DType.promote(a.dtype(), b.dtype()), 1);
    }

    static Tensor logical(Tensor a, Tensor b, boolean and) {
        return binary(and ? BinaryOp.AND : BinaryOp.OR, a, b, DType.promote(a.dtype(), b.dtype()), 1);
    }

    static Tensor logicalNot(Tensor a) {
        return binary(BinaryOp.EQ, a, scalarLike(a, 0), DType.promote(a.dtype(), scalarLike(a, 0).dtype()), 1);
    }

    private static Tensor unary(UnaryOp op, Tensor a) {
        DType dt = op.floatingOnly() && !a.dtype().isFloatingPoint() ? DType.FLOAT32 : a.dtype();
        if (dt == DType.BOOL && op != UnaryOp.ABS) {
            dt = DType.INT64;
        }
        Tensor x = a.dtype() == dt ? a : Conversions.contiguousCopy(a, dt);
        Tensor out = Tensor.allocate(dt, a.shapeRef());
        UnaryKernels.run(op, x, out);
        return out;
    }

    static Tensor neg(Tensor a) {
        if (a.dtype() == DType.BOOL) {
            throw new IllegalArgumentException("Negation, the `-` operator, on a bool tensor is not supported. If you"
                    + " are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
        }
        return Grad.of("NegBackward0", a).record(unary(UnaryOp.NEG, a), g -> new Tensor[] {g.neg()});
    }

    static Tensor abs(Tensor a) {
        return Grad.of("AbsBackward0", a).saving(a).record(unary(UnaryOp.ABS, a), g -> new Tensor[] {g.mul(a.sign())});
    }

    static Tensor exp(Tensor a) {
        Tensor out = unary(UnaryOp.EXP, a);
        return Grad.of("ExpBackward0", a).saving(out).record(out, g -> new Tensor[] {g.mul(out)});
    }

    static Tensor log(Tensor a) {
        return Grad.of("LogBackward0", a).saving(a).record(unary(UnaryOp.LOG, a), g -> new Tensor[] {g.div(a)});
    }

    static Tensor log1p(Tensor a) {
        return Grad.of("Log1PBackward0", a).saving(a).record(unary(UnaryOp.LOG1P, a),
                g -> new Tensor[] {g.div(a.add(1))});
    }

    static Tensor sqrt(Tensor a) {
        Tensor out = unary(UnaryOp.SQRT, a);
        return Grad.of("SqrtBackward0", a).saving(out).record(out, g -> new Tensor[] {g.div(out.mul(2))});
    }

    static Tensor reciprocal(Tensor a) {
        Tensor out = unary(UnaryOp.RECIPROCAL, a);
        return Grad.of("ReciprocalBackward0", a).saving(out).record(out,
                g -> new Tensor[] {g.mul(out.mul(out)).neg()});
    }

    static Tensor sin(Tensor a) {
        return Grad.of("SinBackward0", a).saving(a).record(unary(UnaryOp.SIN, a), g -> new Tensor[] {g.mul(a.cos())});
    }

    static Tensor cos(Tensor a) {
        return Grad.of("CosBackward0", a).saving(a).record(unary(UnaryOp.COS, a),
                g -> new Tensor[] {g.mul(a.sin()).neg()});
    }

    static Tensor tanh(Tensor a) {
        Tensor out = unary(UnaryOp.TANH, a);
        return Grad.of("TanhBackward0", a).saving(out).record(out,
                g -> new Tensor[] {g.mul(out.mul(out).neg().add(1))});
    }

    static Tensor sigmoid(Tensor a) {
        Tensor out = unary(UnaryOp.SIGMOID, a);
        return Grad.of("SigmoidBackward0", a).saving(out).record(out,
                g -> new Tensor[] {g.mul(out.mul(out.neg().add(1)))});
    }

    /** d/dx erf(x) = 2/√π · exp(−x²), built from tensor ops so higher-order gradients work. */
    static Tensor erf(Tensor a) {
        return Grad.of("ErfBackward0", a).saving(a).record(unary(UnaryOp.ERF, a),
                g -> new Tensor[] {g.mul(a.square().neg().exp().mul(2 / Math.sqrt(Math.PI)))});
    }

    static Tensor relu(Tensor a) {
        Tensor out = unary(UnaryOp.RELU, a);
        return Grad.of("ReluBackward0", a).saving(out).record(out, g -> new Tensor[] {reluBackward(g, out)});
    }

    /**
     * {@code g * !(y <= 0)} in one pass (the hot path of every MLP), differentiable in g; a NaN y
     * passes g, as in PyTorch.
     */
    private static Tensor reluBackward(Tensor g, Tensor y) {
        if (g.requiresGrad() || g.dtype() != DType.FLOAT32 || y.dtype() != DType.FLOAT32
                || !java.util.Arrays.equals(g.shapeRef(), y.shapeRef())) {
            return g.mul(y.detach().le(0).logicalNot().to(g.dtype()));
        }
        Tensor out = Tensor.allocate(DType.FLOAT32, g.shapeRef());
        float[] gv = (float[]) g.storage().array();
        float[] yv = (float[]) y.storage().array();
        float[] ov = (float[]) out.storage().array();
        StridedLoop.run(g.shapeRef(), g.stridesRef(), g.storageOffset(), y.stridesRef(), y.storageOffset(),
                out.stridesRef(), 0, (n, ia, sa, ib, sb, io, so) -> {
                    if (sa == 1 && sb == 1 && so == 1 && ia == ib && ib == io) {
                        reluBackwardDense(gv, yv, ov, io, n);
                        return;
                    }
                    for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                        ov[io] = yv[ib] <= 0 ? 0f : gv[ia]; // a NaN passes, as in the dense loop and PyTorch
                    }
                });
        return out;
    }

    /** Keeps g where y > 0 or is NaN; branch-free (y >= 0 or NaN here, so that is iff its bits are non-zero). */
    private static void reluBackwardDense(float[] g, float[] y, float[] o, int off, int n) {
        for (int j = off; j < off + n; j++) {
            int bits = Float.floatToRawIntBits(y[j]);
            o[j] = Float.intBitsToFloat(Float.floatToRawIntBits(g[j]) & ((bits | -bits) >> 31));
        }
    }

    static Tensor sign(Tensor a) {
        return Grad.of("SignBackward0", a).record(unary(UnaryOp.SIGN, a), g -> new Tensor[] {g.mul(0)});
    }

    static Tensor floor(Tensor a) {
        return Grad.of("FloorBackward0", a).record(unary(UnaryOp.FLOOR, a), g -> new Tensor[] {g.mul(0)});
    }

    static Tensor ceil(Tensor a) {
        return Grad.of("CeilBackward0", a).record(unary(UnaryOp.CEIL, a), g -> new Tensor[] {g.mul(0)});
    }

    static Tensor round(Tensor a) {
        return Grad.of("RoundBackward0", a).record(unary(UnaryOp.ROUND, a), g -> new Tensor[] {g.mul(0)});
    }

    static Tensor clamp(Tensor a, double min, double max) {
        Tensor out = a;
        if (!Double.isNaN(min)) {
            out = binary(BinaryOp.MAX, out, scalarLike(a, min), arithmeticType(out, scalarLike(a, min)), 1);
        }
        if (!Double.isNaN(max)) {
            out = binary(BinaryOp.MIN, out, scalarLike(a, max), arithmeticType(out, scalarLike(a, max)), 1);
        }
        if (out == a) {
            out = Conversions.contiguousCopy(a, a.dtype());
        }
        return Grad.of("ClampBackward1", a).saving(a).record(out, g -> {
            Tensor inside = Tensors.onesLike(a).to(DType.BOOL);
            if (!Double.isNaN(min)) {
                inside = inside.logicalAnd(a.ge(min));
            }
            if (!Double.isNaN(max)) {
                inside = inside.logicalAnd(a.le(max));
            }
            return new Tensor[] {g.mul(inside.to(g.dtype()))};
        });
    }

    static Tensor where(Tensor cond, Tensor a, Tensor b) {
        if (cond.dtype() != DType.BOOL) {
            throw new IllegalArgumentException("where expected condition to be a boolean tensor, but got a tensor with"
                    + " dtype " + cond.dtype());
        }
        DType dt = DType.promote(a.dtype(), b.dtype());
        int[] shape = Shapes.broadcast("where", Shapes.broadcast("where", cond.shapeRef(), a.shapeRef()), b.shapeRef());
        Tensor x = a.to(dt).detach().expand(shape);
        Tensor y = b.to(dt).detach().expand(shape);
        Tensor c = cond.expand(shape);
        Tensor out = Tensor.allocate(dt, shape);
        // out = y; then copy x where cond holds.
        dev.ferry.tensor.internal.kernels.CopyKernels.copy(y, out);
        Storage xs = x.storage();
        Storage os = out.storage();
        boolean[] cs = (boolean[]) c.storage().array();
        StridedLoop.run(shape, c.stridesRef(), c.storageOffset(), x.stridesRef(), x.storageOffset(),
                out.stridesRef(), 0, (n, ic, sc, ix, sx, io, so) -> {
                    for (int i = 0; i < n; i++, ic += sc, ix += sx, io += so) {
                        if (cs[ic]) {
                            os.setDouble(io, xs.getDouble(ix));
                        }
                    }
                });
        return Grad.of("WhereBackward0", a, b).saving(cond).record(out, g -> {
            Tensor zero = Tensors.zerosLike(g);
            return new Tensor[] {
                    a.requiresGrad() ? reduceTo(where(cond, g, zero), a.shapeRef()) : null,
                    b.requiresGrad() ? reduceTo(where(cond, zero, g), b.shapeRef()) : null};
        });
    }

    static boolean allclose(Tensor a, Tensor b, double rtol, double atol) {
        Shapes.broadcast(a.shapeRef(), b.shapeRef());
        double[] x = a.expand(Shapes.broadcast(a.shapeRef(), b.shapeRef())).toDoubleArray();
        double[] y = b.expand(Shapes.broadcast(a.shapeRef(), b.shapeRef())).toDoubleArray();
        for (int i = 0; i < x.length; i++) {
            if (Double.isNaN(x[i]) || Double.isNaN(y[i]) || Math.abs(x[i] - y[i]) > atol + rtol * Math.abs(y[i])) {
                if (x[i] != y[i]) {
                    return false;
                }
            }
        }
        return true;
    }

    static boolean equal(Tensor a, Tensor b) {
        if (!java.util.Arrays.equals(a.shapeRef(), b.shapeRef())) {
            return false;
        }
        double[] x = a.toDoubleArray();
        double[] y = b.toDoubleArray();
        return java.util.Arrays.equals(x, y);
    }
}
