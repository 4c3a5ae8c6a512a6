package dev.ferry.rpc.internal.serial;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.security.CodeSource;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;

/**
 * Where a class comes from: the JDK, one of Ferry's own library modules, or elsewhere (the
 * application or some library). The policies decide by this, not by the class's name alone, since
 * a name proves nothing: tests of Ferry live in Ferry's packages ({@code dev.ferry.rpc}), and an
 * application that declares such a package callable must not thereby make Ferry's API
 * ({@code Rpc.shutdown}) callable.
 *
 * <p>The JDK's classes are those of the boot and platform class loaders. Ferry's library modules
 * ({@code ferry-rpc}, {@code ferry-tensor}, {@code ferry-distributed}, {@code ferry-cli} and the
 * optional ones: metrics, tracing, stores) each carry the resource {@value #MARKER}; a class in a {@code dev.ferry} package is Ferry's own when its code
 * source (the jar or directory it was loaded from) holds that resource, or when it has none to
 * tell. Applications and Ferry's examples and benchmarks carry no marker, and neither do the
 * directories tests are compiled into.
 *
 * <p>Immutable; the markers are looked up once, when it is made.
 */
public final class CodeOrigins {
    /** The resource that marks a jar or directory as one of Ferry's library modules. */
    public static final String MARKER = "META-INF/ferry/library";
    private static final String FERRY_PACKAGES = "dev.ferry.";

    private final Set<String> ferryLocations;

    private CodeOrigins(Set<String> ferryLocations) {
        this.ferryLocations = ferryLocations;
    }

    /** The origins as seen through {@code loader}: the Ferry modules on its class path. */
    public static CodeOrigins of(ClassLoader loader) {
        Set<String> locations = new HashSet<>();
        try {
            for (URL marker : Collections.list(loader.getResources(MARKER))) {
                String url = marker.toExternalForm();
                locations.add(outerLocation(url.substring(0, url.length() - MARKER.length())));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look for Ferry's modules on the class path", e);
        }
        // ferry-rpc itself, whatever happened to its resources (a repackaged jar may drop them)
        String own = location(CodeOrigins.class);
        if (own != null) {
            locations.add(own);
        }
        return new CodeOrigins(Set.copyOf(locations));
    }

    /** Whether {@code type} is the JDK's: loaded by the boot or the platform class loader. */
    public boolean isJdk(Class<?> type) {
        ClassLoader loader = type.getClassLoader();
        return loader == null || loader == ClassLoader.getPlatformClassLoader();
    }

    /** Whether {@code type} belongs to one of Ferry's library modules (see the class comment). */
    public boolean isFerry(Class<?> type) {
        if (!type.getName().startsWith(FERRY_PACKAGES)) {
            return false;
        }
        String location = location(type);
        return location == null || ferryLocations.contains(location);
    }

    /** The jar or directory {@code type} was loaded from, in the form {@link #outerLocation} gives; null if unknown. */
    private static String location(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        URL url = source == null ? null : source.getLocation();
        return url == null ? null : outerLocation(url.toExternalForm());
    }

    /** {@code jar:file:/x/a.jar!/} and {@code file:/x/a.jar} are the same location: the latter. */
    private static String outerLocation(String url) {
        if (url.startsWith("jar:") && url.endsWith("!/")) {
            return url.substring("jar:".length(), url.length() - "!/".length());
        }
        return url;
    }
}
