package dev.ferry.rpc.internal.serial;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Package and class names as the options give them ({@code applicationPackage},
 * {@code allowFunctionPrefix}, {@code allowClassPrefix}). An entry covers the class of that name and
 * its nested classes, and, read as a package, that package's classes and its subpackages': entry
 * {@code com.example} (or {@code com.example.}) covers {@code com.example.Ops},
 * {@code com.example.io.Codec} and {@code com.example$Odd}, not {@code com.examples.Ops}. The empty
 * entry is the unnamed package: classes whose name has no dot, and nothing else.
 *
 * <p>Immutable.
 */
public final class NameList {
    private static final NameList NONE = new NameList(List.of());

    private final List<String> entries;

    private NameList(List<String> entries) {
        this.entries = entries;
    }

    public static NameList none() {
        return NONE;
    }

    /** The list of {@code entries}; a trailing dot is dropped ({@code "com.example."} is {@code "com.example"}). */
    public static NameList of(Collection<String> entries) {
        List<String> normalized = new ArrayList<>(entries.size());
        for (String entry : entries) {
            String name = entry.strip();
            normalized.add(name.endsWith(".") ? name.substring(0, name.length() - 1) : name);
        }
        return normalized.isEmpty() ? NONE : new NameList(List.copyOf(normalized));
    }

    /** Whether an entry covers the class named {@code className} (a binary name: {@code a.b.Outer$Inner}). */
    public boolean covers(String className) {
        for (String entry : entries) {
            if (entry.isEmpty() ? className.indexOf('.') < 0 : covers(entry, className)) {
                return true;
            }
        }
        return false;
    }

    private static boolean covers(String entry, String className) {
        if (!className.startsWith(entry)) {
            return false;
        }
        if (className.length() == entry.length()) {
            return true;
        }
        char next = className.charAt(entry.length());
        return next == '.' || next == '$';
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The entries, for messages: {@code [com.example, org.lib.Api]}, the unnamed package as {@code (unnamed package)}. */
    @Override
    public String toString() {
        List<String> shown = new ArrayList<>(entries.size());
        for (String entry : entries) {
            shown.add(entry.isEmpty() ? "(unnamed package)" : entry);
        }
        return shown.toString();
    }
}
