package dev.ferry.rpc.internal.serial;

import org.apache.fory.resolver.DisallowedList;
import org.apache.fory.resolver.TypeChecker;
import org.apache.fory.resolver.TypeResolver;

import java.lang.reflect.Modifier;
import java.nio.Buffer;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides which classes a peer may make this worker instantiate: an allow-list, applied by Fory to
 * every class that arrives by name, and to the sender's own classes as it encodes them. Classes
 * registered with an id (Ferry's wire types, the types of serialization extensions such as
 * ferry-distributed's tensors, and the JDK types Fory knows itself: boxed primitives, strings,
 * primitive arrays, the common collections, {@code java.time}, {@code BigDecimal}, {@code URI}...)
 * arrive by id and are not checked here.
 *
 * <pre>
 * class (first that applies)                             decoded?
 * -----------------------------------------------------  ---------------------------------------
 * Fory's list of gadgets; code execution, reflection,    never, whatever the options say
 *   JNDI, scripting, class loading packages
 * a JDK value type: boxed primitives, String, Object,    yes
 *   java.time, java.math, java.util.concurrent.atomic,
 *   the collections, maps and entries of java.util and
 *   java.util.concurrent, their comparators, Optional,
 *   UUID, Locale, Currency, BitSet, Date, nio buffers,
 *   enums, interfaces and abstract classes
 * any other JDK class (URL, File, InetAddress, Thread,   only if allowClassPrefix names it
 *   executors, ...)
 * of Ferry's own modules                                 only enums (the rest travel by id),
 *                                                          even in the application's packages
 * in the application's packages or allowClassPrefix's   yes
 * anything else                                          no
 * </pre>
 *
 * Arrays are decided by their element class. Interfaces and abstract classes are never
 * instantiated: they are checked when a serializer names its declared field types.
 *
 * <p>Immutable and thread-safe.
 */
public final class ClassPolicy implements TypeChecker {
    private static final List<String> NEVER = List.of(
            "java.lang.Runtime", "java.lang.ProcessBuilder", "java.lang.Process", "java.lang.reflect.",
            "java.lang.invoke.", "java.lang.ClassLoader", "java.lang.Thread", "java.lang.System",
            "java.lang.Module", "java.lang.ref.", "java.rmi.", "java.security.", "javax.naming.",
            "javax.management.", "javax.script.", "java.beans.", "javax.xml.transform.", "jdk.", "sun.",
            "com.sun.", "org.apache.commons.collections.functors.", "org.apache.commons.collections4.functors.",
            "org.codehaus.groovy.", "groovy.", "org.springframework.", "org.apache.xalan.", "bsh.",
            "org.mozilla.javascript.", "net.sf.json.", "javassist.", "org.hibernate.", "org.codehaus.janino.",
            "org.codehaus.commons.compiler.");
    private static final String FERRY_PACKAGES = "dev.ferry.";
    private static final Set<String> PRIMITIVES = Set.of(
            "boolean", "byte", "short", "char", "int", "long", "float", "double");
    private static final Set<String> JDK_VALUES = Set.of(
            "java.lang.Boolean", "java.lang.Byte", "java.lang.Short", "java.lang.Character", "java.lang.Integer",
            "java.lang.Long", "java.lang.Float", "java.lang.Double", "java.lang.Void", "java.lang.String",
            "java.lang.StringBuilder", "java.lang.StringBuffer", "java.lang.Object",
            "java.util.Optional", "java.util.OptionalInt", "java.util.OptionalLong", "java.util.OptionalDouble",
            "java.util.UUID", "java.util.Locale", "java.util.Currency", "java.util.BitSet", "java.util.Date",
            "java.nio.ByteOrder");
    private static final List<String> JDK_VALUE_PACKAGES = List.of(
            "java.time.", "java.math.", "java.util.concurrent.atomic.");
    /** Packages whose collections, maps, entries and comparators are values (not {@code java.security.Provider}). */
    private static final List<String> JDK_COLLECTION_PACKAGES = List.of("java.util", "java.util.concurrent", "java.lang");

    private final NameList application;
    private final NameList allowed;
    private final CodeOrigins origins;
    private final ClassLoader loader;

    /**
     * @param application the application's packages
     * @param allowed     further packages and classes whose instances peers may send
     * @param loader      the loader decoded classes come from
     */
    public ClassPolicy(NameList application, NameList allowed, CodeOrigins origins, ClassLoader loader) {
        this.application = application;
        this.allowed = allowed;
        this.origins = origins;
        this.loader = loader;
    }

    /** Only the JDK's value types and the classes of {@code packages} (for tests and tools). */
    public ClassPolicy(List<String> packages) {
        this(NameList.of(packages), NameList.none(), CodeOrigins.of(ClassPolicy.class.getClassLoader()),
                ClassPolicy.class.getClassLoader());
    }

    @Override
    public boolean checkType(TypeResolver resolver, String className) {
        return isAllowed(className);
    }

    /** Whether instances of {@code className} (a binary name or an array descriptor) may be decoded. */
    public boolean isAllowed(String className) {
        String name = className.startsWith("[") ? elementName(className) : className;
        if (name == null || PRIMITIVES.contains(name)) {
            return name != null;
        }
        if (DisallowedList.contains(name) || isNever(name)) {
            return false;
        }
        if (allowed.covers(name)) {
            return true; // named by the application's own options: its decision
        }
        if (name.startsWith("java.")) {
            return isJdkValue(name);
        }
        if (!application.covers(name)) {
            if (!name.startsWith(FERRY_PACKAGES)) {
                return false;
            }
            Class<?> type = load(name, loader);
            return type != null && type.isEnum() && origins.isFerry(type);
        }
        Class<?> type = load(name, loader);
        // A name in the application's packages may still be the JDK's or Ferry's (see CodeOrigins).
        return type == null || !(origins.isJdk(type) || origins.isFerry(type)) || type.isEnum();
    }

    private static boolean isNever(String name) {
        for (String denied : NEVER) {
            if (name.startsWith(denied)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isJdkValue(String name) {
        if (JDK_VALUES.contains(name)) {
            return true;
        }
        for (String prefix : JDK_VALUE_PACKAGES) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        Class<?> type = load(name, ClassLoader.getPlatformClassLoader());
        if (type == null) {
            return false;
        }
        if (type.isEnum() || type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
            return true;
        }
        if (name.startsWith("java.nio.") && Buffer.class.isAssignableFrom(type)) {
            return true;
        }
        return isDirectlyIn(name, JDK_COLLECTION_PACKAGES) && (Collection.class.isAssignableFrom(type)
                || Map.class.isAssignableFrom(type) || Map.Entry.class.isAssignableFrom(type)
                || Comparator.class.isAssignableFrom(type));
    }

    private static boolean isDirectlyIn(String name, List<String> packages) {
        int dot = name.lastIndexOf('.');
        return dot > 0 && packages.contains(name.substring(0, dot));
    }

    /** The class, not initialized; null if it is not there (Fory then reports it missing). */
    private static Class<?> load(String name, ClassLoader loader) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
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
