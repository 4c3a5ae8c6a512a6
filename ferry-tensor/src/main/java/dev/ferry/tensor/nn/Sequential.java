package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

import java.util.ArrayList;
import java.util.List;

/** Applies its modules in order; they are named "0", "1", ... as in PyTorch. */
public class Sequential extends Module {
    private final List<Module> layers = new ArrayList<>();

    public Sequential(Module... modules) {
        for (Module m : modules) {
            layers.add(registerModule(Integer.toString(layers.size()), m));
        }
    }

    public Module get(int i) {
        return layers.get(i);
    }

    public int size() {
        return layers.size();
    }

    @Override
    public Tensor forward(Tensor input) {
        Tensor x = input;
        for (Module m : layers) {
            x = m.forward(x);
        }
        return x;
    }
}
