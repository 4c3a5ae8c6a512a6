package dev.ferry.tensor;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code Tensor.toString()}, following PyTorch's {@code _tensor_str.py} (precision 4, line width 80,
 * summarization above 1000 elements with 3 edge items), so printed tensors look the same in both.
 * Numbers are rounded from their exact binary value, half to even, as Python's format does.
 */
final class TensorFormatter {
    private static final int PRECISION = 4;
    private static final int LINE_WIDTH = 80;
    private static final int THRESHOLD = 1000;
    private static final int EDGE_ITEMS = 3;

    private TensorFormatter() {
    }

    static String format(Tensor t) {
        String prefix = "tensor(";
        int indent = prefix.length();
        List<String> suffixes = new ArrayList<>();
        boolean defaultDtype = t.dtype() == DType.FLOAT32 || t.dtype() == DType.INT64 || t.dtype() == DType.BOOL;
        String body;
        if (t.numel() == 0) {
            if (t.dim() != 1) {
                suffixes.add("size=" + tuple(t.shapeRef()));
            }
            if (t.dtype() != DType.FLOAT32) {
                suffixes.add("dtype=" + t.dtype());
            }
            body = "[]";
        } else {
            if (!defaultDtype) {
                suffixes.add("dtype=" + t.dtype());
            }
            boolean summarize = t.numel() > THRESHOLD;
            List<Double> values = new ArrayList<>();
            collect(t.detach(), summarize, values);
            Formatter f = new Formatter(t.dtype(), values);
            body = tensorStr(t.detach(), indent, summarize, f);
        }
        if (t.gradFn() != null) {
            suffixes.add("grad_fn=<" + t.gradFn().name() + ">");
        } else if (t.requiresGrad()) {
            suffixes.add("requires_grad=True");
        }
        return addSuffixes(prefix + body, suffixes, indent);
    }

    private static String tuple(int[] shape) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            sb.append(i > 0 ? ", " : "").append(shape[i]);
        }
        return sb.append(shape.length == 1 ? ",)" : ")").toString();
    }

    private static String addSuffixes(String tensorStr, List<String> suffixes, int indent) {
        StringBuilder sb = new StringBuilder(tensorStr);
        int lastLineLen = tensorStr.length() - tensorStr.lastIndexOf('\n') + 1;
        for (String suffix : suffixes) {
            if (lastLineLen + suffix.length() + 2 > LINE_WIDTH) {
                sb.append(",\n").append(" ".repeat(indent)).append(suffix);
                lastLineLen = indent + suffix.length();
            } else {
                sb.append(", ").append(suffix);
                lastLineLen += suffix.length() + 2;
            }
        }
        return sb.append(')').toString();
    }

    /** The values that will be printed (PyTorch's get_summarized_data), for the width computation. */
    private static void collect(Tensor t, boolean summarize, List<Double> out) {
        if (t.dim() == 0) {
            out.add(t.item());
            return;
        }
        int n = t.size(0);
        for (int i = 0; i < n; i++) {
            if (summarize && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
                i = n - EDGE_ITEMS;
            }
            collect(t.select(0, i), summarize, out);
        }
    }

    private static String tensorStr(Tensor t, int indent, boolean summarize, Formatter f) {
        int dim = t.dim();
        if (dim == 0) {
            return f.format(t.item());
        }
        if (dim == 1) {
            return vectorStr(t, indent, summarize, f);
        }
        int n = t.size(0);
        List<String> slices = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (summarize && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
                slices.add("...");
                i = n - EDGE_ITEMS;
            }
            slices.add(tensorStr(t.select(0, i), indent + 1, summarize, f));
        }
        String sep = "," + "\n".repeat(dim - 1) + " ".repeat(indent + 1);
        return "[" + String.join(sep, slices) + "]";
    }

    private static String vectorStr(Tensor t, int indent, boolean summarize, Formatter f) {
        int elementLength = f.width() + 2;
        int perLine = Math.max(1, (int) Math.floor((LINE_WIDTH - indent) / (double) elementLength));
        int n = t.size(0);
        List<String> data = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (summarize && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
                data.add(" ...");
                i = n - EDGE_ITEMS;
            }
            data.add(f.format(t.getDouble(i)));
        }
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < data.size(); i += perLine) {
            lines.add(String.join(", ", data.subList(i, Math.min(data.size(), i + perLine))));
        }
        return "[" + String.join(",\n" + " ".repeat(indent + 1), lines) + "]";
    }

    /** PyTorch's _Formatter: picks integer, fixed or scientific notation and a common width. */
    private static final class Formatter {
        private final DType dtype;
        private boolean intMode = true;
        private boolean sciMode;
        private int maxWidth = 1;

        Formatter(DType dtype, List<Double> values) {
            this.dtype = dtype;
            if (!dtype.isFloatingPoint()) {
                for (double v : values) {
                    maxWidth = Math.max(maxWidth, plain(v).length());
                }
                return;
            }
            List<Double> finite = new ArrayList<>();
            for (double v : values) {
                if (Double.isFinite(v) && v != 0) {
                    finite.add(v);
                }
            }
            if (finite.isEmpty()) {
                return;
            }
            double min = Double.POSITIVE_INFINITY;
            double max = 0;
            for (double v : finite) {
                min = Math.min(min, Math.abs(v));
                max = Math.max(max, Math.abs(v));
                if (v != Math.ceil(v)) {
                    intMode = false;
                }
            }
            if (intMode) {
                if (max / min > 1000. || max > 1.e8) {
                    sciMode = true;
                    for (double v : finite) {
                        maxWidth = Math.max(maxWidth, sci(v).length());
                    }
                } else {
                    for (double v : finite) {
                        maxWidth = Math.max(maxWidth, fixed(v, 0).length() + 1);
                    }
                }
            } else if (max / min > 1000. || max > 1.e8 || min < 1.e-4) {
                sciMode = true;
                for (double v : finite) {
                    maxWidth = Math.max(maxWidth, sci(v).length());
                }
            } else {
                for (double v : finite) {
                    maxWidth = Math.max(maxWidth, fixed(v, PRECISION).length());
                }
            }
        }

        int width() {
            return maxWidth;
        }

        String format(double v) {
            String s;
            if (!dtype.isFloatingPoint()) {
                s = plain(v);
            } else if (sciMode) {
                s = sci(v);
            } else if (intMode) {
                s = fixed(v, 0) + (Double.isFinite(v) ? "." : "");
            } else {
                s = fixed(v, PRECISION);
            }
            return " ".repeat(Math.max(0, maxWidth - s.length())) + s;
        }

        private String plain(double v) {
            if (dtype == DType.BOOL) {
                return v != 0 ? "True" : "False";
            }
            return Long.toString((long) v);
        }
    }

    private static String nonFinite(double v) {
        return Double.isNaN(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    }

    private static boolean negative(double v) {
        return v < 0 || (v == 0 && 1 / v < 0);
    }

    /** Python's '{:.Nf}'. */
    static String fixed(double v, int decimals) {
        if (!Double.isFinite(v)) {
            return nonFinite(v);
        }
        String s = new BigDecimal(Math.abs(v)).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString();
        return negative(v) ? "-" + s : s;
    }

    /** Python's '{:.4e}'. */
    static String sci(double v) {
        if (!Double.isFinite(v)) {
            return nonFinite(v);
        }
        String sign = negative(v) ? "-" : "";
        if (v == 0) {
            return sign + "0." + "0".repeat(PRECISION) + "e+00";
        }
        BigDecimal bd = new BigDecimal(Math.abs(v)).round(new MathContext(PRECISION + 1, RoundingMode.HALF_EVEN));
        int exponent = bd.precision() - bd.scale() - 1;
        StringBuilder digits = new StringBuilder(bd.unscaledValue().toString());
        while (digits.length() < PRECISION + 1) {
            digits.append('0');
        }
        String exp = String.format("%02d", Math.abs(exponent));
        return sign + digits.charAt(0) + "." + digits.substring(1, PRECISION + 1) + "e" + (exponent < 0 ? "-" : "+")
                + exp;
    }
}
