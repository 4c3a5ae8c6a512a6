package dev.ferry.rpc.internal.serial;

import java.util.List;
import java.util.Set;

/**
 * Decides which methods a peer may run on this worker. A peer names a method by class and name,
 * so without a policy it could call any method on the class path: the JDK's classes are denied
 * except for a few side-effect-free ones, and Ferry's internals except its system calls. When
 * {@code allowedPrefixes} is not empty, only classes under those prefixes may be called, and the
 * trusted classes of libraries built on Ferry.
 */
public final class FunctionPolicy {
    private static final Set<String> SAFE_JDK_CLASSES = Set.of(
            "java.lang.Math", "java.lang.StrictMath", "java.lang.String", "java.lang.Integer", "java.lang.Long",
            "java.lang.Double", "java.lang.Float", "java.lang.Short", "java.lang.Byte", "java.lang.Boolean",
            "java.lang.Character", "java.util.Objects", "java.util.Arrays", "java.util.List", "java.util.Map",
            "java.util.Set", "java.util.Collections", "java.lang.Object");
    private static final List<String> JDK_PREFIXES = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.");
    private static final String FERRY_INTERNAL = "dev.ferry.rpc.internal.";
    private static final String SYSTEM_CALLS = "dev.ferry.rpc.internal.agent.SystemCalls";

    private final List<String> allowedPrefixes;
    private final Set<String> trustedClasses;

    public FunctionPolicy(List<String> allowedPrefixes) {
        this(allowedPrefixes, Set.of());
    }

    /**
     * @param allowedPrefixes packages whose classes peers may call (all, when empty)
     * @param trustedClasses  classes peers may call whatever {@code allowedPrefixes} says (libraries'
     *                        entry points, see {@link dev.ferry.rpc.spi.TrustedFunctions})
     */
    public FunctionPolicy(List<String> allowedPrefixes, Set<String> trustedClasses) {
        this.allowedPrefixes = List.copyOf(allowedPrefixes);
        this.trustedClasses = Set.copyOf(trustedClasses);
    }

    /** Null when {@code className} may be called, otherwise the reason it may not. */
    public String denialReason(String className) {
        if (className.equals(SYSTEM_CALLS) || SAFE_JDK_CLASSES.contains(className)) {
            return null;
        }
        for (String prefix : JDK_PREFIXES) {
            if (className.startsWith(prefix)) {
                return "methods of JDK class " + className + " may not be called remotely";
            }
        }
        if (className.startsWith(FERRY_INTERNAL)) {
            return "Ferry's internal class " + className + " may not be called remotely";
        }
        if (allowedPrefixes.isEmpty() || trustedClasses.contains(className)) {
            return null;
        }
        for (String prefix : allowedPrefixes) {
            if (className.startsWith(prefix)) {
                return null;
            }
        }
        return "class " + className + " is not in the allowed function packages " + allowedPrefixes;
    }
}
