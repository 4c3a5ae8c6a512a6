package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.RpcException;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Resolves what a peer names, a {@link FunctionRef} or an interface method of an RRef proxy, to
 * something this worker runs, if the {@link FunctionPolicy} allows it; otherwise the call fails
 * with {@link RpcException.Code#UNKNOWN_FUNCTION} naming the method and the rule. The named class
 * is loaded without being initialized, so a refused class runs none of its code. Resolutions are
 * cached (only allowed methods, so the cache is bounded by the program's code): a function is
 * looked up once however often it is called.
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
     * A public instance method of interface {@code type}, declared there or inherited, named by a peer
     * for an RRef proxy, after the policy's check of {@code type}. It is then invoked on a value this
     * worker owns, which must implement {@code type}.
     */
    public InterfaceMethod interfaceMethod(String type, String name, String descriptor) {
        String display = type + "::" + name;
        Class<?> owner = load(type, display);
        if (!owner.isInterface()) {
            throw unknown(display, type + " is not an interface");
        }
        Method method;
        try {
            method = owner.getMethod(name, MethodType.fromMethodDescriptorString(descriptor, classLoader).parameterArray());
        } catch (NoSuchMethodException e) {
            throw unknown(display, "no method " + name + descriptor + " in " + type);
        } catch (TypeNotPresentException | IllegalArgumentException e) {
            throw unknown(display, "bad descriptor " + descriptor + ": " + e.getMessage());
        }
        if (Modifier.isStatic(method.getModifiers())) {
            throw unknown(display, "static interface methods are not called through proxies");
        }
        String refusal = policy.refusal(owner, method);
        if (refusal != null) {
            throw unknown(display, refusal);
        }
        return new InterfaceMethod(owner, method);
    }

    /** An interface method a peer named for an RRef proxy, with the interface it named. */
    public record InterfaceMethod(Class<?> type, Method method) {
        /**
         * Runs the method on {@code value}, which must implement the named interface; what the method
         * throws propagates unchanged.
         */
        public Object invoke(Object value, Object[] args) throws Exception {
            if (!type.isInstance(value)) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "the RRef's value, a "
                        + (value == null ? "null" : value.getClass().getName()) + ", does not implement " + type.getName());
            }
            try {
                return method.invoke(value, args);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw (Exception) e.getCause();
            }
        }
    }

    private FunctionInvoker doResolve(FunctionRef ref) {
        String display = ref.className() + "::" + ref.methodName();
        Class<?> owner = load(ref.className(), display);
        try {
            MethodType type = MethodType.fromMethodDescriptorString(ref.descriptor(), classLoader);
            Executable target = ref.kind() == MethodHandleInfo.REF_newInvokeSpecial
                    ? owner.getDeclaredConstructor(type.parameterArray())
                    : owner.getDeclaredMethod(ref.methodName(), type.parameterArray());
            String refusal = policy.refusal(owner, target);
            if (refusal != null) {
                throw unknown(display, refusal);
            }
            // Package-private methods and lambdas' bodies of callable classes, not public: a lookup
            // of Ferry's cannot reach them otherwise.
            target.setAccessible(true);
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MethodHandle handle = target instanceof Constructor<?> constructor
                    ? lookup.unreflectConstructor(constructor) : lookup.unreflect((Method) target);
            boolean async = target.isAnnotationPresent(AsyncExecution.class);
            return new FunctionInvoker(ref.displayName(), handle, async, policy.isSystem(owner));
        } catch (TypeNotPresentException e) {
            throw unknown(display, "class " + e.typeName() + " is not on this worker's class path");
        } catch (NoSuchMethodException e) {
            throw unknown(display, "no method " + ref.methodName() + ref.descriptor() + " in " + ref.className()
                    + " on this worker (is it running a different version of the code?)");
        } catch (RpcException e) {
            throw e;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            throw unknown(display, e.toString());
        }
    }

    /** Loads {@code name} without initializing it: nothing of a class runs before the policy allowed it. */
    private Class<?> load(String name, String display) {
        try {
            return Class.forName(name, false, classLoader);
        } catch (ClassNotFoundException e) {
            throw unknown(display, "class " + name + " is not on this worker's class path"
                    + " (Ferry sends functions by reference; the callee must have the same classes)");
        } catch (LinkageError | RuntimeException e) {
            throw unknown(display, "class " + name + " cannot be loaded: " + e);
        }
    }

    private static RpcException unknown(String display, String why) {
        return new RpcException(RpcException.Code.UNKNOWN_FUNCTION, "cannot call " + display + ": " + why);
    }
}
