package dev.ferry.tensor.internal.kernels;

/** Element-wise binary operations; arithmetic ones keep the operand dtype, comparisons give bool. */
public enum BinaryOp {
    ADD, SUB, MUL, DIV, POW, MAX, MIN,
    EQ, NE, LT, LE, GT, GE,
    AND, OR;

    public boolean isComparison() {
        return ordinal() >= EQ.ordinal();
    }

    double apply(double a, double b) {
        return switch (this) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case POW -> Math.pow(a, b);
            case MAX -> Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : Math.max(a, b);
            case MIN -> Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : Math.min(a, b);
            default -> test(a, b) ? 1 : 0;
        };
    }

    long apply(long a, long b) {
        return switch (this) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> {
                if (b == 0) {
                    throw new ArithmeticException("ZeroDivisionError (integer division by zero)");
                }
                yield Math.floorDiv(a, b);
            }
            case POW -> {
                if (b < 0) {
                    throw new ArithmeticException("Integers to negative integer powers are not allowed.");
                }
                long r = 1;
                for (long i = 0; i < b; i++) {
                    r *= a;
                }
                yield r;
            }
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> test(a, b) ? 1 : 0;
        };
    }

    boolean test(double a, double b) {
        return switch (this) {
            case EQ -> a == b;
            case NE -> a != b;
            case LT -> a < b;
            case LE -> a <= b;
            case GT -> a > b;
            case GE -> a >= b;
            case AND -> a != 0 && b != 0;
            case OR -> a != 0 || b != 0;
            default -> throw new IllegalStateException(this + " is not a comparison");
        };
    }

    boolean test(long a, long b) {
        return switch (this) {
            case EQ -> a == b;
            case NE -> a != b;
            case LT -> a < b;
            case LE -> a <= b;
            case GT -> a > b;
            case GE -> a >= b;
            case AND -> a != 0 && b != 0;
            case OR -> a != 0 || b != 0;
            default -> throw new IllegalStateException(this + " is not a comparison");
        };
    }
}
