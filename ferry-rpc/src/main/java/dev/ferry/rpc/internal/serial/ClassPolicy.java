package dev.ferry.rpc.internal.serial;

import org.apache.fory.resolver.DisallowedList;
import org.apache.fory.resolver.TypeChecker;
import org.apache.fory.resolver.TypeResolver;

import java.util.List;
import java.util.Set;

/**
 * Decides which classes a peer may make this worker instantiate. Applied to every class that
 * arrives by name (registered classes arrive by id and are always allowed).
 *
 * <p>Always denied: Fory's own list of known deserialization gadgets, and packages that give
 * code execution, JNDI, scripting or reflection proxies. When {@code allowedPrefixes} is not
 * empty, only classes under those prefixes, plus arrays, boxed primitives, strings and the JDK's
 * collection and time types, are allowed.
 */
public final class ClassPolicy implements TypeChecker {
    private static final List<String> DENIED_PREFIXES = List.of(
            "java.lang.Runtime", "java.lang.ProcessBuilder", "java.lang.Process", "java.lang.reflect.",
            "java.lang.invoke.", "java.lang.ClassLoader", "java.lang.Thread", "java.rmi.", "javax.naming.",
            "javax.management.", "javax.script.", "java.beans.", "javax.xml.transform.", "jdk.", "sun.",
            "com.sun.", "org.apache.commons.collections.functors.", "org.apache.commons.collections4.functors.",
            "org.codehaus.groovy.", "groovy.", "org.springframework.", "org.apache.xalan.", "bsh.",
            "org.mozilla.javascript.", "net.sf.json.", "javassist.", "org.hibernate.");
    private static final List<String> ALWAYS_ALLOWED_PREFIXES = List.of(
            "java.lang.", "java.util.", "java.time.", "java.math.", "java.nio.", "[");
    private static final Set<String> PRIMITIVES = Set.of(
            "boolean", "byte", "short", "char", "int", "long", "float", "double");

    private final List<String> allowedPrefixes;

    public ClassPolicy(List<String> allowedPrefixes) {
        this.allowedPrefixes = List.copyOf(allowedPrefixes);
    }

    @Override
    public boolean checkType(TypeResolver resolver, String className) {
        return isAllowed(className);
    }

    /** Whether instances of {@code className} may be created from bytes a peer sent. */
    public boolean isAllowed(String className) {
        String name = className.startsWith("[") ? elementName(className) : className;
        if (name == null || PRIMITIVES.contains(name)) {
            return name != null;
        }
        if (DisallowedList.contains(name)) {
            return false;
        }
        for (String denied : DENIED_PREFIXES) {
            if (name.startsWith(denied)) {
                return false;
            }
        }
        if (allowedPrefixes.isEmpty()) {
            return true;
        }
        for (String prefix : ALWAYS_ALLOWED_PREFIXES) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        for (String prefix : allowedPrefixes) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** The element class name of an array descriptor ("[[Lfoo.Bar;" gives "foo.Bar"). */
    private static String elementName(String descriptor) {
        int dims = 0;
        while (dims < descriptor.length() && descriptor.charAt(dims) == '[') {
            dims++;
        }
        String rest = descriptor.substring(dims);
        if (rest.startsWith("L") && rest.endsWith(";")) {
            return rest.substring(1, rest.length() - 1);
        }
        return rest.length() == 1 ? "int" : null; // a primitive component: always fine
    }
}
