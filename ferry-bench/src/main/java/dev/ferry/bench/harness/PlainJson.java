package dev.ferry.bench.harness;

import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for maps, lists, strings and numbers, written without a JSON library.
 *
 * <p>Workers use it for their {@code RESULT} line instead of Jackson: initializing Jackson's
 * {@code ObjectMapper} builds a date format (which enumerates every locale the JDK knows) and
 * {@code BigDecimal}'s constants, some 100 ms of interpreted work plus just-in-time compilations
 * that run into what the worker measures (W1's idle probe right after {@code init}, W2's first
 * windows). The driver, which measures nothing, reads the lines with Jackson.
 */
public final class PlainJson {

  private PlainJson() {}

  /** {@code value} as indented JSON; non-finite numbers become {@code null}. */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb, "");
    return sb.toString();
  }

  /** {@code value} as JSON on one line. */
  public static String writeLine(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb, null);
    return sb.toString();
  }

  /** {@code indent} null: all on one line. */
  private static void write(Object o, StringBuilder sb, String indent) {
    if (o instanceof Map<?, ?> map) {
      sb.append("{");
      String inner = indent == null ? null : indent + " ";
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        separate(sb, first, inner);
        string(String.valueOf(e.getKey()), sb);
        sb.append(": ");
        write(e.getValue(), sb, inner);
        first = false;
      }
      close(sb, first, indent, "}");
    } else if (o instanceof List<?> list) {
      sb.append("[");
      String inner = indent == null ? null : indent + " ";
      for (int i = 0; i < list.size(); i++) {
        separate(sb, i == 0, inner);
        write(list.get(i), sb, inner);
      }
      close(sb, list.isEmpty(), indent, "]");
    } else if (o instanceof Number n) {
      double d = n.doubleValue();
      sb.append(Double.isFinite(d) ? (o instanceof Integer || o instanceof Long ? n.toString()
          : Double.toString(d)) : "null");
    } else if (o instanceof Boolean || o == null) {
      sb.append(o);
    } else {
      string(String.valueOf(o), sb);
    }
  }

  private static void separate(StringBuilder sb, boolean first, String inner) {
    if (inner == null) {
      sb.append(first ? "" : ", ");
    } else {
      sb.append(first ? "\n" : ",\n").append(inner);
    }
  }

  private static void close(StringBuilder sb, boolean empty, String indent, String bracket) {
    sb.append(empty || indent == null ? bracket : "\n" + indent + bracket);
  }

  private static void string(String s, StringBuilder sb) {
    sb.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        default -> sb.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
    }
    sb.append('"');
  }
}
