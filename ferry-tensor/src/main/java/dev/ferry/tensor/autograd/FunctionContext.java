package dev.ferry.tensor.autograd;

import dev.ferry.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

/**
 * Per-call state shared by {@link Function#forward} and {@link Function#backward} (PyTorch's
 * {@code ctx}). Tensors saved with {@link #saveForBackward} are checked on retrieval: if one was
 * modified in place after being saved, {@link #savedTensors()} fails instead of silently
 * computing a wrong gradient.
 */
public final class FunctionContext {
    private final boolean[] needsInputGrad;
    private Tensor[] saved = new Tensor[0];
    private int[] savedVersions = new int[0];
    private final Map<String, Object> values = new HashMap<>();
    private boolean released;

    FunctionContext(boolean[] needsInputGrad) {
        this.needsInputGrad = needsInputGrad;
    }

    /** Whether input {@code i} needs a gradient (backward may return null for it if not). */
    public boolean needsInputGrad(int i) {
        return needsInputGrad[i];
    }

    /** Keeps tensors for backward. Call it in forward at most once. */
    public void saveForBackward(Tensor... tensors) {
        saved = tensors.clone();
        savedVersions = new int[tensors.length];
        for (int i = 0; i < tensors.length; i++) {
            savedVersions[i] = tensors[i].version();
        }
    }

    /** The tensors given to {@link #saveForBackward}, in order. */
    public Tensor[] savedTensors() {
        if (released) {
            throw new IllegalStateException("Trying to backward through the graph a second time (or directly access"
                    + " saved tensors after they have already been freed). Specify retainGraph=true if you need to"
                    + " backward through the graph a second time.");
        }
        for (int i = 0; i < saved.length; i++) {
            if (saved[i].version() != savedVersions[i]) {
                throw new IllegalStateException("one of the variables needed for gradient computation has been"
                        + " modified by an inplace operation: saved tensor " + i + " is at version "
                        + saved[i].version() + "; expected version " + savedVersions[i] + " instead.");
            }
        }
        return saved.clone();
    }

    /** Stores a non-tensor value for backward. */
    public void put(String key, Object value) {
        values.put(key, value);
    }

    /** A value stored with {@link #put}. */
    public <T> T get(String key, Class<T> type) {
        return type.cast(values.get(key));
    }

    void release() {
        released = true;
        saved = new Tensor[0];
        values.clear();
    }
}
