package dev.ferry.rpc.internal.serial;

/**
 * Makes a string safe to concatenate, log and encode. Fory 1.6 builds strings through a zero-copy
 * constructor that takes a coder as given, and the value 3, which no encoder writes, gives a
 * {@code java.lang.String} whose {@code length()} disagrees with the characters it holds:
 * concatenating it throws {@code ArrayIndexOutOfBoundsException}, and encoding it writes the bad
 * coder again. Its characters ({@link String#toCharArray()}, which reads the bytes it holds) make a
 * sound string.
 *
 * <p>A peer can no longer send one: {@link ObjectCodec} refuses a string header with coder 3 while
 * it decodes ({@code CorruptStringsTest}). Code in this worker still can make one, since the
 * constructor is public in Fory ({@code StringSerializer.newBytesStringZeroCopy}): a function, a
 * library it calls, or an extension's serializer. So this is used where such a text must not stop
 * an answer: the description of a failure, built from a local exception, travels back to the caller
 * (a corrupt message would make it throw, or be refused by the caller); and a caller turns a
 * received one into its exception's message.
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
