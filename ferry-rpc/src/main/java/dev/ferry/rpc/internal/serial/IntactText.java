package dev.ferry.rpc.internal.serial;

/**
 * Makes a string that may have come from a peer safe to concatenate, log and encode. Fory 1.6 takes
 * the two coder bits of a string's header as they come, and the value 3, which no encoder writes,
 * gives a {@code java.lang.String} whose {@code length()} disagrees with the characters it holds:
 * concatenating it throws {@code ArrayIndexOutOfBoundsException}, and encoding it writes the bad
 * coder again. Its characters ({@link String#toCharArray()}, which reads the bytes it holds) make a
 * sound string.
 *
 * <p>Used where such a text must not stop an answer: the description of a failure travels back to
 * the caller, and a caller turns a received one into its exception's message.
 */
public final class IntactText {
    private IntactText() {
    }

    /** {@code text} itself when it is sound (or null), else a sound string of its characters. */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        char[] chars = text.toCharArray();
        return chars.length == text.length() ? text : new String(chars);
    }
}
