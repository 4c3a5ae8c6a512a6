package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A function registered under a name ({@code agent.register("scale", Ops::scale)}): called by name
 * with positional and keyword arguments, bound to its parameters as Python binds them, with the
 * defaults given at registration for the parameters a call leaves out. Immutable; thread-safe.
 *
 * <p>The parameter names are the method's own, which the class file keeps when it was compiled
 * with {@code javac -parameters}; registration fails without them.
 */
final class NamedFunction {
    private final String name;
    private final MethodHandle handle;
    private final Object[] captured;
    private final List<String> parameters;
    private final List<Type> types;
    private final Map<String, Object> defaults;
    private final boolean async;

    private NamedFunction(String name, MethodHandle handle, Object[] captured, List<String> parameters,
                          List<Type> types, Map<String, Object> defaults, boolean async) {
        this.name = name;
        this.handle = handle;
        this.captured = captured;
        this.parameters = parameters;
        this.types = types;
        this.defaults = defaults;
        this.async = async;
    }

    /**
     * The function {@code function} refers to, registered as {@code name} with {@code defaults}
     * (parameter name to value) for parameters a call may leave out.
     *
     * @throws RpcException {@code INVALID_ARGUMENT} if the method is not a static method (or a
     *                      method reference bound to its receiver), its parameter names were not
     *                      compiled in, or a default names no parameter or does not fit its type
     */
    static NamedFunction of(String name, RemoteFunction function, Map<String, ?> defaults) {
        FunctionRef ref = FunctionRefs.of(function);
        Method method = method(name, ref, function.getClass().getClassLoader());
        Object[] captured = ref.captured() == null ? new Object[0] : ref.captured();
        Parameter[] declared = method.getParameters();
        // A bound method reference (counter::add) captures its receiver; a capturing lambda its values:
        // they come first in the method's parameters and are not the caller's to pass.
        int own = Modifier.isStatic(method.getModifiers()) ? captured.length : captured.length - 1;
        if (own < 0 || own > declared.length) {
            throw invalid("cannot register " + ref.displayName() + " as '" + name + "': only static methods,"
                    + " and method references bound to their receiver can be called by name");
        }
        List<String> parameters = new ArrayList<>();
        List<Type> types = new ArrayList<>();
        for (int i = own; i < declared.length; i++) {
            if (!declared[i].isNamePresent()) {
                // javac writes no parameter names for a lambda's body, not even with -parameters
                throw invalid("cannot register " + ref.displayName() + " as '" + name + "': " + (method.isSynthetic()
                        ? "it is a lambda, whose parameter names javac does not keep (not even with -parameters);"
                                + " register a method reference to a named method"
                        : "its parameter names are not in its class file; compile it with javac -parameters (Maven:"
                                + " <parameters>true</parameters>)"));
            }
            parameters.add(declared[i].getName());
            types.add(declared[i].getParameterizedType());
        }
        Map<String, Object> checked = new LinkedHashMap<>();
        defaults.forEach((parameter, value) -> {
            int index = parameters.indexOf(parameter);
            if (index < 0) {
                throw invalid("cannot register '" + name + "': a default is given for '" + parameter
                        + "', which is not a parameter of " + ref.displayName() + parameters);
            }
            checked.put(parameter, ArgumentTypes.convert(name, parameter, types.get(index), value));
        });
        MethodHandle handle;
        try {
            method.setAccessible(true);
            handle = MethodHandles.lookup().unreflect(method);
        } catch (IllegalAccessException | RuntimeException e) {
            throw invalid("cannot register " + ref.displayName() + " as '" + name + "': " + e);
        }
        boolean async = method.isAnnotationPresent(AsyncExecution.class);
        if (async && !RpcFuture.class.isAssignableFrom(method.getReturnType())
                && !CompletionStage.class.isAssignableFrom(method.getReturnType())) {
            throw invalid("cannot register " + ref.displayName() + " as '" + name + "': it is marked @AsyncExecution"
                    + " but returns " + method.getReturnType().getName() + ", not a future");
        }
        return new NamedFunction(name, handle, captured, List.copyOf(parameters), List.copyOf(types),
                Collections.unmodifiableMap(checked), async);
    }

    private static Method method(String name, FunctionRef ref, ClassLoader loader) {
        if (ref.kind() == MethodHandleInfo.REF_newInvokeSpecial) {
            throw invalid("cannot register the constructor " + ref.displayName() + " as '" + name
                    + "': register a static factory method");
        }
        try {
            Class<?> owner = Class.forName(ref.className(), false, loader);
            MethodType type = MethodType.fromMethodDescriptorString(ref.descriptor(), loader);
            return owner.getDeclaredMethod(ref.methodName(), type.parameterArray());
        } catch (ReflectiveOperationException | TypeNotPresentException e) {
            throw invalid("cannot register " + ref.displayName() + " as '" + name + "': " + e);
        }
    }

    String name() {
        return name;
    }

    /** The parameters a caller names, in order. */
    List<String> parameters() {
        return parameters;
    }

    /**
     * Binds {@code args} and {@code kwargs} to the parameters and runs the function; its result
     * as a future (completed at once unless the function is {@link AsyncExecution}).
     *
     * @throws RpcException {@code INVALID_ARGUMENT} naming the argument that is missing, unknown,
     *                      given twice, or of a type that does not fit
     */
    @SuppressWarnings("unchecked")
    RpcFuture<Object> call(List<?> args, Map<String, ?> kwargs) throws Exception {
        Object[] bound = bind(args == null ? List.of() : args, kwargs == null ? Map.of() : kwargs);
        Object[] all = new Object[captured.length + bound.length];
        System.arraycopy(captured, 0, all, 0, captured.length);
        System.arraycopy(bound, 0, all, captured.length, bound.length);
        Object result;
        try {
            result = handle.invokeWithArguments(all);
        } catch (Exception | Error e) {
            throw e; // the function's own, unchanged
        } catch (Throwable t) {
            throw new RpcException(RpcException.Code.INTERNAL, name + "() threw " + t, t);
        }
        if (!async) {
            return RpcFuture.completed(result);
        }
        if (result instanceof RpcFuture<?> future) {
            return (RpcFuture<Object>) future;
        }
        return RpcFuture.fromCompletionStage((CompletionStage<Object>) result);
    }

    private Object[] bind(List<?> args, Map<String, ?> kwargs) {
        int n = parameters.size();
        if (args.size() > n) {
            throw invalid(name + "() takes " + count(n, "positional argument") + " but " + args.size()
                    + (args.size() == 1 ? " was" : " were") + " given");
        }
        Object[] values = new Object[n];
        boolean[] given = new boolean[n];
        for (int i = 0; i < args.size(); i++) {
            values[i] = args.get(i);
            given[i] = true;
        }
        for (Map.Entry<String, ?> entry : kwargs.entrySet()) {
            int index = parameters.indexOf(entry.getKey());
            if (index < 0) {
                throw invalid(name + "() got an unexpected keyword argument '" + entry.getKey() + "'; its parameters"
                        + " are " + parameters);
            }
            if (given[index]) {
                throw invalid(name + "() got multiple values for argument '" + entry.getKey() + "'");
            }
            values[index] = entry.getValue();
            given[index] = true;
        }
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (!given[i]) {
                if (defaults.containsKey(parameters.get(i))) {
                    values[i] = defaults.get(parameters.get(i));
                } else {
                    missing.add("'" + parameters.get(i) + "'");
                }
            } else {
                values[i] = ArgumentTypes.convert(name, parameters.get(i), types.get(i), values[i]);
            }
        }
        if (!missing.isEmpty()) {
            throw invalid(name + "() missing " + count(missing.size(), "required argument") + ": "
                    + String.join(", ", missing));
        }
        return values;
    }

    private static String count(int n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
