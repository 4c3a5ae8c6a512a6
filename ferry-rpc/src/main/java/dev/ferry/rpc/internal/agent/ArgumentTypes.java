package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fits a value a caller sent by name to the parameter's type, as a caller without the callee's
 * classes needs: the value itself when it is an instance (primitives boxed), any number for a
 * {@code double} or {@code float} (as Python passes an int for a float), a whole number in range
 * for an integer type (a 2.0 or a long 2 for an {@code int}), a map of its components for a record
 * (as a caller would send a JSON object), and the elements of a {@code List}, {@code Set},
 * {@code Collection} or the values of a {@code Map} to their declared type argument; anything else
 * is an error naming the argument (a component {@code p.x}, an element {@code xs[2]}).
 */
final class ArgumentTypes {
    private static final Map<Class<?>, Class<?>> BOXES = Map.of(
            boolean.class, Boolean.class, byte.class, Byte.class, short.class, Short.class, char.class, Character.class,
            int.class, Integer.class, long.class, Long.class, float.class, Float.class, double.class, Double.class);

    private ArgumentTypes() {
    }

    static Object convert(String function, String parameter, Type type, Object value) {
        if (type instanceof ParameterizedType generic && generic.getRawType() instanceof Class<?> raw) {
            Object whole = convert(function, parameter, raw, value);
            return whole == null ? null : elements(function, parameter, raw, generic.getActualTypeArguments(), whole);
        }
        if (type instanceof WildcardType wildcard) {
            return convert(function, parameter, wildcard.getUpperBounds()[0], value);
        }
        return type instanceof Class<?> plain ? convert(function, parameter, plain, value) : value; // a type variable
    }

    private static Object convert(String function, String parameter, Class<?> type, Object value) {
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
        if (type.isRecord() && value instanceof Map<?, ?> components) {
            return record(function, parameter, type, components);
        }
        throw mismatch(function, parameter, type, value.getClass().getName() + " " + value);
    }

    /** The elements of a collection, or the values of a map, fitted to their type argument (copied if any changes). */
    private static Object elements(String function, String parameter, Class<?> raw, Type[] arguments, Object whole) {
        if (whole instanceof Map<?, ?> map && Map.class.isAssignableFrom(raw) && arguments.length == 2) {
            Map<Object, Object> fitted = new LinkedHashMap<>();
            boolean changed = false;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                Object value = convert(function, parameter + "[" + entry.getKey() + "]", arguments[1], entry.getValue());
                changed |= value != entry.getValue();
                fitted.put(entry.getKey(), value);
            }
            return changed ? fitted : whole;
        }
        if (whole instanceof Collection<?> collection && arguments.length == 1
                && (raw == List.class || raw == Collection.class || raw == Set.class || raw == Iterable.class)) {
            List<Object> fitted = new ArrayList<>(collection.size());
            boolean changed = false;
            int index = 0;
            for (Object element : collection) {
                Object value = convert(function, parameter + "[" + index++ + "]", arguments[0], element);
                changed |= value != element;
                fitted.add(value);
            }
            if (!changed) {
                return whole;
            }
            return raw == Set.class ? new LinkedHashSet<>(fitted) : fitted;
        }
        return whole; // another generic type: its arguments are not checked
    }

    /** A record made from a map of its components by name, each fitted to its type. */
    private static Object record(String function, String parameter, Class<?> type, Map<?, ?> given) {
        RecordComponent[] components = type.getRecordComponents();
        List<String> names = Arrays.stream(components).map(RecordComponent::getName).toList();
        for (Object key : given.keySet()) {
            if (!names.contains(key)) {
                throw invalid(function + "() argument '" + parameter + "' has no component '" + key + "': "
                        + type.getName() + " has " + names);
            }
        }
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            String name = components[i].getName();
            if (!given.containsKey(name)) {
                throw invalid(function + "() argument '" + parameter + "' is missing component '" + name + "' of "
                        + type.getName() + " " + names);
            }
            values[i] = convert(function, parameter + "." + name, components[i].getGenericType(), given.get(name));
            types[i] = components[i].getType();
        }
        try {
            Constructor<?> canonical = type.getDeclaredConstructor(types);
            canonical.setAccessible(true);
            return canonical.newInstance(values);
        } catch (InvocationTargetException e) {
            Throwable refusal = e.getCause();
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, function + "() argument '" + parameter + "': "
                    + type.getSimpleName() + "'s constructor refused " + given + ": " + refusal, refusal);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, function + "() argument '" + parameter
                    + "': cannot make a " + type.getName() + " from " + given + ": " + e, e);
        }
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
        return invalid(function + "() argument '" + parameter + "' must be " + type.getName() + ", not " + got);
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
