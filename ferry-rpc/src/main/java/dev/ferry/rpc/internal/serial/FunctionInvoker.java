package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcException;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;

/**
 * A resolved remote function: calls the method with the captured values followed by the call's
 * arguments (for an instance method the first of them is the receiver).
 */
public final class FunctionInvoker {
    private final String name;
    private final MethodHandle spread;
    private final int arity;
    private final boolean async;
    private final boolean system;

    FunctionInvoker(String name, MethodHandle handle, boolean async, boolean system) {
        this.system = system;
        this.name = name;
        this.arity = handle.type().parameterCount();
        this.spread = handle.asFixedArity()
                .asSpreader(Object[].class, arity)
                .asType(MethodType.methodType(Object.class, Object[].class));
        this.async = async;
    }

    /** True when the method is marked {@link dev.ferry.rpc.AsyncExecution}. */
    public boolean isAsync() {
        return async;
    }

    /** True for Ferry's own system calls, the only ones whose headers may steer how they run. */
    public boolean isSystem() {
        return system;
    }

    public String name() {
        return name;
    }

    /** Calls the function; its own exceptions propagate unchanged. */
    public Object invoke(Object[] captured, Object[] args) throws Throwable {
        Object[] all;
        if (captured.length == 0) {
            all = args;
        } else {
            all = new Object[captured.length + args.length];
            System.arraycopy(captured, 0, all, 0, captured.length);
            System.arraycopy(args, 0, all, captured.length, args.length);
        }
        if (all.length != arity) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    name + " takes " + (arity - captured.length) + " argument(s) but the call passed " + args.length);
        }
        try {
            return (Object) spread.invokeExact(all);
        } catch (ClassCastException | NullPointerException e) {
            if (isArgumentConversionFailure(e)) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                        "arguments of the wrong type for " + name + ": " + e.getMessage(), e);
            }
            throw e;
        }
    }

    /** True when the exception came from converting arguments, not from inside the method. */
    private static boolean isArgumentConversionFailure(RuntimeException e) {
        StackTraceElement[] trace = e.getStackTrace();
        for (StackTraceElement frame : trace) {
            String cls = frame.getClassName();
            if (cls.startsWith("java.lang.invoke.") || cls.startsWith("sun.invoke.")) {
                continue;
            }
            return cls.equals(FunctionInvoker.class.getName());
        }
        return false;
    }
}
