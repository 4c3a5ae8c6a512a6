package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcCallable;

import java.lang.reflect.Executable;
import java.lang.reflect.Modifier;
import java.util.Set;

/**
 * Decides which methods a peer may run on this worker: an allow-list. A peer names a method by
 * class, name and descriptor; it runs only if the program exposes it:
 *
 * <pre>
 * rule (first that applies)                        the method is
 * -----------------------------------------------  --------------------------------------------
 * private, not synthetic                           refused: "private method"
 * of Ferry's system calls (one class)              callable
 * of a JDK class                                   refused: "JDK class"
 * of a class a TrustedFunctions provider lists     callable
 * of a class of Ferry's own modules                refused: "Ferry's own class"
 * of a class in the application's packages         callable
 * of a class allowFunctionPrefix covers            callable
 * of a class marked @RpcCallable, or marked itself callable
 * anything else                                    refused: "not declared callable"
 * </pre>
 *
 * Synthetic private methods are the bodies of lambdas: a lambda written in a callable class is
 * callable. Where a class comes from is decided by {@link CodeOrigins}, never by its name alone.
 *
 * <p>Immutable and thread-safe.
 */
public final class FunctionPolicy {
    /** The rules that refuse; their labels appear in the refusals peers get. */
    enum Rule {
        PRIVATE_METHOD("private method"),
        JDK_CLASS("JDK class"),
        FERRY_CLASS("Ferry's own class"),
        NOT_DECLARED("not declared callable");

        final String label;

        Rule(String label) {
            this.label = label;
        }
    }

    private final NameList application;
    private final NameList allowed;
    private final Set<Class<?>> trusted;
    private final Class<?> systemCalls;
    private final CodeOrigins origins;

    /**
     * @param application the application's packages (and classes)
     * @param allowed     further packages and classes whose methods peers may call
     * @param trusted     the classes of libraries' declared entry points
     * @param systemCalls the class of Ferry's own remote functions
     */
    public FunctionPolicy(NameList application, NameList allowed, Set<Class<?>> trusted, Class<?> systemCalls,
                          CodeOrigins origins) {
        this.application = application;
        this.allowed = allowed;
        this.trusted = Set.copyOf(trusted);
        this.systemCalls = systemCalls;
        this.origins = origins;
    }

    /** Whether {@code owner} is the class of Ferry's system calls. */
    public boolean isSystem(Class<?> owner) {
        return owner == systemCalls;
    }

    /**
     * Null when peers may run {@code target}, a method or constructor declared by {@code owner} (or,
     * for an interface method, inherited by it), else why not: the rule's label, then what it means.
     */
    public String refusal(Class<?> owner, Executable target) {
        if (Modifier.isPrivate(target.getModifiers()) && !target.isSynthetic()) {
            return refused(Rule.PRIVATE_METHOD, "private methods are never called for peers (a lambda is; or make"
                    + " the method package-private)");
        }
        if (owner == systemCalls) {
            return null;
        }
        if (origins.isJdk(owner)) {
            return refused(Rule.JDK_CLASS, owner.getName() + " is the JDK's, whose methods are never called for peers"
                    + " (call it from a method or lambda of the application)");
        }
        if (trusted.contains(owner)) {
            return null;
        }
        if (origins.isFerry(owner)) {
            return refused(Rule.FERRY_CLASS, owner.getName() + " is Ferry's own code, which peers may not call"
                    + " (only Ferry's system calls and the entry points its modules declare)");
        }
        String name = owner.getName();
        if (application.covers(name) || allowed.covers(name) || owner.isAnnotationPresent(RpcCallable.class)
                || target.isAnnotationPresent(RpcCallable.class)) {
            return null;
        }
        return refused(Rule.NOT_DECLARED, name + " is not in the application's packages " + application
                + (application.isEmpty() ? " (ferry run declares the main class's package; otherwise"
                        + " RpcBackendOptions.Builder.applicationPackage or FERRY_APPLICATION_PACKAGES)" : "")
                + ", not allowed by allowFunctionPrefix " + allowed + " and not marked @RpcCallable");
    }

    private static String refused(Rule rule, String why) {
        return "refused (" + rule.label + "): " + why;
    }
}
