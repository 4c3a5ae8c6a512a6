package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.RpcException;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Resolves a {@link FunctionRef} sent by a peer to a callable method on this worker, after
 * checking the {@link FunctionPolicy}. Resolutions are cached, so a function is looked up once
 * however often it is called.
 *
 * <p>This class is thread-safe.
 */
public final class FunctionResolver {
    private final FunctionPolicy policy;
    private final ClassLoader classLoader;
    private final ConcurrentMap<FunctionRef.MethodKey, FunctionInvoker> cache = new ConcurrentHashMap<>();

    public FunctionResolver(FunctionPolicy policy, ClassLoader classLoader) {
        this.policy = policy;
        this.classLoader = classLoader;
    }

    public FunctionInvoker resolve(FunctionRef ref) {
        FunctionInvoker known = cache.get(ref.key());
        if (known != null) {
            return known;
        }
        FunctionInvoker resolved = doResolve(ref);
        cache.putIfAbsent(ref.key(), resolved);
        return resolved;
    }

    /**
     * An interface method named by a peer (for RRef proxies), after the same policy check as
     * functions. The method is then invoked on a value this worker owns.
     */
    public java.lang.reflect.Method interfaceMethod(String type, String name, String descriptor) {
        String denial = policy.denialReason(type);
        if (denial != null) {
            throw new RpcException(RpcException.Code.UNKNOWN_FUNCTION, "cannot call " + type + "::" + name + ": " + denial);
        }
        try {
            Class<?> owner = Class.forName(type, false, classLoader);
            if (!owner.isInterface()) {
                throw new RpcException(RpcException.Code.UNKNOWN_FUNCTION, type + " is not an interface");
            }
            MethodType methodType = MethodType.fromMethodDescriptorString(descriptor, classLoader);
            return owner.getMethod(name, methodType.parameterArray());
        } catch (ClassNotFoundException | TypeNotPresentException e) {
            throw new RpcException(RpcException.Code.UNKNOWN_FUNCTION, "interface " + type + " is not on this worker's class path");
        } catch (NoSuchMethodException e) {
            throw new RpcException(RpcException.Code.UNKNOWN_FUNCTION, "no method " + name + descriptor + " in " + type);
        }
    }

    private FunctionInvoker doResolve(FunctionRef ref) {
        String denial = policy.denialReason(ref.className());
        if (denial != null) {
            throw unknown(ref, denial);
        }
        try {
            Class<?> owner = Class.forName(ref.className(), false, classLoader);
            MethodType type = MethodType.fromMethodDescriptorString(ref.descriptor(), classLoader);
            Executable target;
            MethodHandle handle;
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            if (ref.kind() == MethodHandleInfo.REF_newInvokeSpecial) {
                Constructor<?> constructor = owner.getDeclaredConstructor(type.parameterArray());
                constructor.setAccessible(true);
                target = constructor;
                handle = lookup.unreflectConstructor(constructor);
            } else {
                Method method = owner.getDeclaredMethod(ref.methodName(), type.parameterArray());
                method.setAccessible(true);
                target = method;
                handle = lookup.unreflect(method);
            }
            boolean async = target.isAnnotationPresent(AsyncExecution.class);
            return new FunctionInvoker(ref.displayName(), handle, async);
        } catch (ClassNotFoundException | TypeNotPresentException e) {
            throw unknown(ref, "class " + e.getMessage() + " is not on this worker's class path"
                    + " (Ferry sends functions by reference; the callee must have the same classes)");
        } catch (NoSuchMethodException e) {
            throw unknown(ref, "no method " + ref.methodName() + ref.descriptor() + " in " + ref.className()
                    + " on this worker (is it running a different version of the code?)");
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            throw unknown(ref, e.toString());
        }
    }

    private static RpcException unknown(FunctionRef ref, String why) {
        return new RpcException(RpcException.Code.UNKNOWN_FUNCTION,
                "cannot call " + ref.className() + "::" + ref.methodName() + ": " + why);
    }
}
