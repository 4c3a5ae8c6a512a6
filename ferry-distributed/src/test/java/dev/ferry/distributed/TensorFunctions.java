package dev.ferry.distributed;

import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Functions the tests call remotely, and what a callee reports about a tensor it received. */
public final class TensorFunctions {
    private TensorFunctions() {
    }

    /** PyTorch's {@code my_tensor_function}. */
    public static Tensor add(Tensor a, Tensor b) {
        return a.add(b);
    }

    public static Object echo(Object value) {
        return value;
    }

    public static Layout layoutOf(Tensor t) {
        return Layout.of(t);
    }

    public static boolean sameStorage(Tensor a, Tensor b) {
        return a.storage() == b.storage();
    }

    public static boolean sameTensor(Tensor a, Tensor b) {
        return a == b;
    }

    public static boolean isParameter(Tensor t) {
        return t instanceof Parameter;
    }

    /** A fresh tensor that requires grad and has history on the callee. */
    public static Tensor doubledRequiringGrad(int n) {
        return Tensors.ones(n).requiresGrad_(true).mul(2);
    }

    /** Sum of every tensor in a nested container: lists, maps (keys and values) and {@link Holder}s. */
    public static double sumAll(Object value) {
        if (value instanceof Tensor t) {
            return t.sum().item();
        } else if (value instanceof List<?> list) {
            return list.stream().mapToDouble(TensorFunctions::sumAll).sum();
        } else if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream().mapToDouble(e -> sumAll(e.getKey()) + sumAll(e.getValue())).sum();
        } else if (value instanceof Holder h) {
            return sumAll(h.tensors()) + sumAll(h.byName());
        }
        return 0;
    }

    /** Like PyTorch's {@code TensorClass} namedtuple: a record holding tensors in containers. */
    public record Holder(List<List<Tensor>> tensors, Map<String, Tensor> byName) {
    }

    /** What a received tensor looks like on the worker that received it. */
    public record Layout(String dtype, List<Integer> shape, List<Integer> strides, int offset, int storageSize,
                         boolean contiguous, boolean requiresGrad, boolean leaf, boolean hasGradFn) {
        static Layout of(Tensor t) {
            return new Layout(t.dtype().toString(), boxed(t.shape()), boxed(t.strides()), t.storageOffset(),
                    t.storage().size(), t.isContiguous(), t.requiresGrad(), t.isLeaf(), t.gradFn() != null);
        }

        private static List<Integer> boxed(int[] values) {
            return Arrays.stream(values).boxed().toList();
        }
    }
}
