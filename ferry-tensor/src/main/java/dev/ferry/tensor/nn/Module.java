package dev.ferry.tensor.nn;

import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.autograd.Autograd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Base class of layers and models ({@code torch.nn.Module}): it owns named parameters and child
 * modules, and maps one input tensor to one output in {@link #forward}.
 *
 * <pre>
 * class Mlp extends Module {
 *     final Linear fc1 = registerModule("fc1", new Linear(256, 256));
 *     final Linear fc2 = registerModule("fc2", new Linear(256, 10));
 *     final Parameter scale = registerParameter("scale", new Parameter(Tensors.ones(1)));
 *     public Tensor forward(Tensor x) { return fc2.forward(fc1.forward(x).relu()).mul(scale); }
 * }
 * </pre>
 *
 * <p>Not thread-safe: train one model per thread, or synchronize.
 */
public abstract class Module {
    private final Map<String, Tensor> parameters = new LinkedHashMap<>();
    private final Map<String, Module> children = new LinkedHashMap<>();
    private boolean training = true;

    public abstract Tensor forward(Tensor input);

    /**
     * Registers a parameter under {@code name} and returns it; {@code null} registers an absent
     * parameter (e.g. a disabled bias), which {@link #parameters()} skips. It takes a
     * {@link Parameter}, not any tensor, as PyTorch does: wrapping implicitly would register a
     * different object from the one the caller keeps, and that one would silently get no gradient.
     *
     * <pre>
     * weight = registerParameter("weight", new Parameter(Tensors.zeros(out, in)));
     * </pre>
     */
    protected final Parameter registerParameter(String name, Parameter parameter) {
        checkName(name);
        parameters.put(name, parameter);
        return parameter;
    }

    /** Registers a child module; returns it. */
    protected final <M extends Module> M registerModule(String name, M module) {
        checkName(name);
        children.put(name, module);
        return module;
    }

    private void checkName(String name) {
        if (name == null || name.isEmpty() || name.contains(".")) {
            throw new IllegalArgumentException("module and parameter names must be non-empty and contain no '.': "
                    + name);
        }
        if (parameters.containsKey(name) || children.containsKey(name)) {
            throw new IllegalArgumentException("attribute '" + name + "' already exists");
        }
    }

    /**
     * All parameters (each a {@link Parameter}) of this module and its children, each once, in
     * registration order: the list to give an optimizer.
     */
    public final List<Tensor> parameters() {
        return new ArrayList<>(namedParameters().values());
    }

    /** Parameters by dotted path ({@code "fc1.weight"}), each tensor once. */
    public final Map<String, Tensor> namedParameters() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        collect("", out, seen);
        return out;
    }

    private void collect(String prefix, Map<String, Tensor> out, Set<Tensor> seen) {
        parameters.forEach((name, p) -> {
            if (p != null && seen.add(p)) {
                out.put(prefix + name, p);
            }
        });
        children.forEach((name, child) -> child.collect(prefix + name + ".", out, seen));
    }

    /** Direct children by name. */
    public final Map<String, Module> children() {
        return Collections.unmodifiableMap(children);
    }

    /** Clears every parameter's {@code .grad} (PyTorch's {@code zero_grad(set_to_none=True)}). */
    public final void zeroGrad() {
        for (Tensor p : parameters()) {
            p.setGrad(null);
        }
    }

    /** Training mode, the default: the same as {@code train(true)}. */
    public final Module train() {
        return train(true);
    }

    /** Sets training mode here and in all children (affects e.g. dropout); returns this. */
    public Module train(boolean mode) {
        training = mode;
        children.values().forEach(c -> c.train(mode));
        return this;
    }

    public final Module eval() {
        return train(false);
    }

    public final boolean isTraining() {
        return training;
    }

    /** Copies of all parameters by dotted name (detached: saving them keeps no graph alive). */
    public final Map<String, Tensor> stateDict() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        namedParameters().forEach((k, v) -> out.put(k, v.detach().clone()));
        return out;
    }

    /** Copies values into the parameters; names and shapes must match exactly. */
    public final void loadStateDict(Map<String, Tensor> state) {
        Map<String, Tensor> own = namedParameters();
        if (!own.keySet().equals(state.keySet())) {
            Set<String> missing = new java.util.LinkedHashSet<>(own.keySet());
            missing.removeAll(state.keySet());
            Set<String> unexpected = new java.util.LinkedHashSet<>(state.keySet());
            unexpected.removeAll(own.keySet());
            throw new IllegalArgumentException("Error(s) in loading state_dict for " + getClass().getSimpleName()
                    + ": missing key(s) " + missing + ", unexpected key(s) " + unexpected);
        }
        try (var scope = Autograd.noGrad()) {
            own.forEach((k, p) -> {
                Tensor src = state.get(k);
                if (!java.util.Arrays.equals(src.shape(), p.shape())) {
                    throw new IllegalArgumentException("size mismatch for " + k + ": copying a param with shape "
                            + java.util.Arrays.toString(src.shape()) + ", the shape in current model is "
                            + java.util.Arrays.toString(p.shape()));
                }
                p.copy_(src);
            });
        }
    }

    /** One-line description of this module's own settings, e.g. {@code in_features=2, out_features=3}. */
    protected String extraRepr() {
        return "";
    }

    /** PyTorch-style nested description. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(getClass().getSimpleName()).append('(').append(extraRepr());
        if (!children.isEmpty()) {
            sb.append('\n');
            children.forEach((name, child) -> sb.append("  (").append(name).append("): ")
                    .append(child.toString().replace("\n", "\n  ")).append('\n'));
        }
        return sb.append(')').toString();
    }
}
