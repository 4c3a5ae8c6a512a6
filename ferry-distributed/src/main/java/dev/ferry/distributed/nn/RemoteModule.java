package dev.ferry.distributed.nn;

import dev.ferry.distributed.internal.ModuleCalls;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFunction0;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Module;

import java.util.List;
import java.util.Objects;

/**
 * PyTorch's {@code torch.distributed.nn.RemoteModule}: an {@code nn} module that lives on another
 * worker, used as if it were here. {@link #forward} runs the module on its owner; inside a
 * distributed autograd context the pass is recorded, so a backward pass reaches the module's
 * parameters there, and {@link #remoteParameters()} hands them to a
 * {@link dev.ferry.distributed.optim.DistributedOptimizer}.
 *
 * <pre>{@code
 * RemoteModule<Linear> fc = RemoteModule.create("worker1", Layers::hidden);   // Layers.hidden() builds a Linear
 * DistributedOptimizer optimizer = new DistributedOptimizer(p -> new SGD(p, 0.05), fc.remoteParameters());
 * try (DistAutogradContext context = DistAutograd.context()) {
 *     Tensor loss = fc.forward(x).sub(y).pow(2).mean();
 *     context.backward(List.of(loss));
 *     optimizer.step(context.id());
 * }
 * }</pre>
 *
 * <p>Where it lives is PyTorch's remote device: {@code "worker1/cpu"}, {@code "rank:1/cpu"} or a
 * worker name alone; Ferry's tensors are CPU-only, so any other device is an
 * {@link dev.ferry.rpc.RpcException.Code#INVALID_ARGUMENT} error. Unlike PyTorch's, a constructor
 * that throws fails {@link #create} (not the first forward), and {@link #train(boolean)} honours
 * its argument and changes the remote module itself.
 *
 * @param <M> the module's type
 */
public final class RemoteModule<M extends Module> implements AutoCloseable {
    private final RRef<M> module;

    private RemoteModule(RRef<M> module) {
        this.module = module;
    }

    /** Builds a module on {@code remoteDevice} with {@code constructor}, through the current agent. */
    public static <M extends Module> RemoteModule<M> create(String remoteDevice, RpcFunction0<M> constructor) {
        return create(Rpc.current(), remoteDevice, constructor);
    }

    /**
     * Builds a module on {@code remoteDevice} ({@code "worker1/cpu"}, {@code "rank:1/cpu"} or
     * {@code "worker1"}) with {@code constructor} (run there: a method reference or a lambda whose
     * class is on that worker's class path) and waits until it exists.
     *
     * @throws dev.ferry.rpc.RpcException {@code INVALID_ARGUMENT} for a remote device that does not
     *                                    parse or is not {@code cpu}; the constructor's failure (its
     *                                    remote error as the cause)
     */
    public static <M extends Module> RemoteModule<M> create(RpcAgent agent, String remoteDevice,
                                                            RpcFunction0<M> constructor) {
        Objects.requireNonNull(constructor, "constructor");
        String worker = RemoteDevice.parse(remoteDevice).workerName(agent);
        RRef<M> module = agent.remote(worker, constructor);
        try {
            module.rpcSync(ModuleCalls::ready);
        } catch (RuntimeException e) {
            module.close();
            throw e;
        }
        return new RemoteModule<>(module);
    }

    /** Runs the module's {@code forward} on its owner and returns the result. */
    public Tensor forward(Tensor input) {
        return module.rpcSync(ModuleCalls::forward, input);
    }

    /** {@link #forward} without waiting. */
    public RpcFuture<Tensor> forwardAsync(Tensor input) {
        return module.rpcAsync(ModuleCalls::forward, input);
    }

    /** RRefs to the module's parameters, owned by its worker (for a {@code DistributedOptimizer}). */
    public List<RRef<Tensor>> remoteParameters() {
        return module.rpcSync(ModuleCalls::parameterRRefs);
    }

    /** Sets the remote module's training mode (as {@code Module.train(mode)} does); returns this. */
    public RemoteModule<M> train(boolean mode) {
        module.rpcSync(ModuleCalls::train, mode);
        return this;
    }

    public RemoteModule<M> train() {
        return train(true);
    }

    public RemoteModule<M> eval() {
        return train(false);
    }

    public boolean isTraining() {
        return module.rpcSync(ModuleCalls::isTraining);
    }

    /** The RRef of the module itself, for calls of your own: {@code moduleRRef().rpcSync(...)}. */
    public RRef<M> moduleRRef() {
        return module;
    }

    public WorkerInfo owner() {
        return module.owner();
    }

    /** Releases this worker's reference to the module. */
    @Override
    public void close() {
        module.close();
    }

    @Override
    public String toString() {
        return "RemoteModule(on " + module.ownerName() + ")";
    }
}
