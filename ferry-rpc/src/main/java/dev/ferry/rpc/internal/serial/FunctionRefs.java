package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.AsyncRemoteFunction;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcException;

import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;

/**
 * Turns a serializable method reference or lambda into a {@link FunctionRef} on the caller, by
 * asking the lambda for its {@link SerializedLambda} (the standard serialization form of lambdas).
 */
public final class FunctionRefs {
    private static final ClassValue<Method> WRITE_REPLACE = new ClassValue<>() {
        @Override
        protected Method computeValue(Class<?> type) {
            try {
                Method method = type.getDeclaredMethod("writeReplace");
                method.setAccessible(true);
                return method;
            } catch (NoSuchMethodException e) {
                return null;
            } catch (RuntimeException e) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                        "cannot inspect the function " + type.getName() + ": " + e.getMessage(), e);
            }
        }
    };
    private static final Object[] NONE = new Object[0];
    /**
     * The function of each lambda class, resolved once: returned as is when nothing is captured
     * (its captured values are {@link #NONE}), else the template of each call's reference, without
     * captured values (the method is the same for every instance of the class).
     */
    private static final ClassValue<FunctionRef[]> RESOLVED = new ClassValue<>() {
        @Override
        protected FunctionRef[] computeValue(Class<?> type) {
            return new FunctionRef[1];
        }
    };

    private FunctionRefs() {
    }

    public static FunctionRef of(RemoteFunction function) {
        if (function == null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "function must not be null");
        }
        if (function instanceof AsyncValue value) {
            return of(value.function()); // an AsyncRpcFunctionN lambda: marked below
        }
        Class<?> type = function.getClass();
        FunctionRef[] cached = RESOLVED.get(type);
        FunctionRef known = cached[0];
        if (known != null && known.captured() == NONE) {
            return known;
        }
        SerializedLambda lambda = serializedForm(function);
        Object[] captured = new Object[lambda.getCapturedArgCount()];
        for (int i = 0; i < captured.length; i++) {
            captured[i] = lambda.getCapturedArg(i);
        }
        if (known != null) {
            return known.withCaptured(captured);
        }
        FunctionRef ref = new FunctionRef(lambda.getImplClass().replace('/', '.'), lambda.getImplMethodName(),
                lambda.getImplMethodSignature(), lambda.getImplMethodKind(), captured.length == 0 ? NONE : captured);
        if (function instanceof AsyncRemoteFunction) {
            ref.markFutureValue();
        }
        // a capturing lambda's template holds no captured values (they could be large)
        cached[0] = captured.length == 0 ? ref : ref.withCaptured(null);
        return ref;
    }

    private static SerializedLambda serializedForm(RemoteFunction function) {
        Method writeReplace = WRITE_REPLACE.get(function.getClass());
        if (writeReplace == null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "the function " + function.getClass().getName()
                    + " is not a method reference or lambda; pass one, e.g. Ops::add or (a, b) -> a + b");
        }
        try {
            Object form = writeReplace.invoke(function);
            if (form instanceof SerializedLambda lambda) {
                return lambda;
            }
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "the function " + function.getClass().getName()
                    + " is not a method reference or lambda; pass one, e.g. Ops::add or (a, b) -> a + b");
        } catch (ReflectiveOperationException e) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    "cannot inspect the function " + function.getClass().getName() + ": " + e, e);
        }
    }
}
