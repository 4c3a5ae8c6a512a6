package dev.ferry.tensor.internal.kernels;

import org.apache.commons.numbers.gamma.Erf;

import java.util.function.DoubleUnaryOperator;

/** Element-wise unary operations. {@code floatingOnly} ops turn integer inputs into float32. */
public enum UnaryOp {
    NEG(false, x -> -x),
    ABS(false, Math::abs),
    SIGN(false, Math::signum),
    RELU(false, x -> x > 0 ? x : (Double.isNaN(x) ? x : 0)),
    EXP(true, Math::exp),
    LOG(true, Math::log),
    LOG1P(true, Math::log1p),
    SQRT(true, Math::sqrt),
    RECIPROCAL(true, x -> 1 / x),
    SIN(true, Math::sin),
    COS(true, Math::cos),
    TANH(true, Math::tanh),
    SIGMOID(true, x -> 1 / (1 + Math.exp(-x))),
    ERF(true, Erf::value),
    FLOOR(false, Math::floor),
    CEIL(false, Math::ceil),
    ROUND(false, Math::rint);

    private final boolean floatingOnly;
    final DoubleUnaryOperator fn;

    UnaryOp(boolean floatingOnly, DoubleUnaryOperator fn) {
        this.floatingOnly = floatingOnly;
        this.fn = fn;
    }

    public boolean floatingOnly() {
        return floatingOnly;
    }

    public double apply(double x) {
        return fn.applyAsDouble(x);
    }

    long apply(long x) {
        return switch (this) {
            case NEG -> -x;
            case ABS -> Math.abs(x);
            case SIGN -> Long.signum(x);
            case RELU -> Math.max(x, 0);
            default -> x; // floor, ceil, round of an integer
        };
    }
}
