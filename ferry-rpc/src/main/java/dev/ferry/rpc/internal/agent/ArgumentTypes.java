package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;

import java.util.Map;

/**
 * Fits a value a caller sent by name to the parameter's type, as a caller without the callee's
 * classes needs: the value itself when it is an instance (primitives boxed), any number for a
 * {@code double} or {@code float} (as Python passes an int for a float), a whole number in range
 * for an integer type (a 2.0 or a long 2 for an {@code int}); anything else is an error naming the
 * argument.
 */
final class ArgumentTypes {
    private static final Map<Class<?>, Class<?>> BOXES = Map.of(
            boolean.class, Boolean.class, byte.class, Byte.class, short.class, Short.class, char.class, Character.class,
            int.class, Integer.class, long.class, Long.class, float.class, Float.class, double.class, Double.class);

    private ArgumentTypes() {
    }

    static Object convert(String function, String parameter, Class<?> type, Object value) {
        Class<?> boxed = type.isPrimitive() ? BOXES.get(type) : type;
        if (value == null) {
            if (type.isPrimitive()) {
                throw mismatch(function, parameter, type, "null");
            }
            return null;
        }
        if (boxed.isInstance(value)) {
            return value;
        }
        if (value instanceof Number number) {
            Object exact = exactNumber(boxed, number);
            if (exact != null) {
                return exact;
            }
        }
        throw mismatch(function, parameter, type, value.getClass().getName() + " " + value);
    }

    /** {@code number} as {@code boxed}, or null when that would change an integer's value. */
    private static Object exactNumber(Class<?> boxed, Number number) {
        if (boxed == Double.class) {
            return number.doubleValue();
        }
        if (boxed == Float.class) {
            return number.floatValue();
        }
        boolean fractional = (number instanceof Double || number instanceof Float)
                && number.doubleValue() != Math.rint(number.doubleValue());
        long value = number.longValue();
        if (fractional || (number instanceof Double || number instanceof Float) && value != number.doubleValue()) {
            return null;
        }
        if (boxed == Long.class) {
            return value;
        }
        if (boxed == Integer.class && value == (int) value) {
            return (int) value;
        }
        if (boxed == Short.class && value == (short) value) {
            return (short) value;
        }
        if (boxed == Byte.class && value == (byte) value) {
            return (byte) value;
        }
        return null;
    }

    private static RpcException mismatch(String function, String parameter, Class<?> type, String got) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT,
                function + "() argument '" + parameter + "' must be " + type.getName() + ", not " + got);
    }
}
