package dev.ferry.distributed.internal;

import dev.ferry.tensor.DType;

/** Stable one-byte codes for {@link DType}s on the wire (never the enum's ordinal, which may change). */
final class WireDType {
    private WireDType() {
    }

    static byte code(DType dtype) {
        return switch (dtype) {
            case BOOL -> 1;
            case INT32 -> 2;
            case INT64 -> 3;
            case FLOAT32 -> 4;
            case FLOAT64 -> 5;
        };
    }

    static DType of(byte code) {
        return switch (code) {
            case 1 -> DType.BOOL;
            case 2 -> DType.INT32;
            case 3 -> DType.INT64;
            case 4 -> DType.FLOAT32;
            case 5 -> DType.FLOAT64;
            default -> throw new MalformedTensorException("unknown dtype code " + code);
        };
    }

    static Class<?> arrayClass(DType dtype) {
        return switch (dtype) {
            case BOOL -> boolean[].class;
            case INT32 -> int[].class;
            case INT64 -> long[].class;
            case FLOAT32 -> float[].class;
            case FLOAT64 -> double[].class;
        };
    }
}
