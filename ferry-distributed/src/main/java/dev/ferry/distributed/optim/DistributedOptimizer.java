package dev.ferry.distributed.optim;

import dev.ferry.distributed.internal.OptimizerCalls;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.optim.Optimizer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * PyTorch's {@code torch.distributed.optim.DistributedOptimizer}: one optimizer over parameters
 * that live on several workers, given as RRefs. On each worker that owns some of them it builds a
 * local optimizer (with {@code factory}, run there, over the parameter tensors themselves);
 * {@link #step(long)} has each of them take one step with that worker's gradients of a
 * distributed autograd context, all workers in parallel, and returns when all are done.
 *
 * <pre>{@code
 * DistributedOptimizer optimizer = new DistributedOptimizer(params -> new SGD(params, 0.05), remoteParams);
 * try (DistAutogradContext context = DistAutograd.context()) {
 *     Tensor loss = ...;                        // a forward pass through remote modules
 *     context.backward(List.of(loss));
 *     optimizer.step(context.id());
 * }
 * }</pre>
 *
 * <p>The factory is sent as a function reference (a method reference, or a lambda with its
 * captured values), so its class must be on every owner's class path. Concurrent steps on one
 * worker are serialized, those of different {@code DistributedOptimizer}s too (several trainers
 * stepping one parameter server's parameters), as PyTorch's {@code _LocalOptimizer} lock does; steps
 * on different workers are not ordered. Closing releases the remote optimizers.
 */
public final class DistributedOptimizer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DistributedOptimizer.class);
    private final List<RRef<? extends Optimizer>> optimizers;
    private final AtomicBoolean warnedNoGradients = new AtomicBoolean();

    /** On the current agent ({@link Rpc#current()}). */
    public DistributedOptimizer(RpcFunction1<List<Tensor>, ? extends Optimizer> factory, List<RRef<Tensor>> params) {
        this(Rpc.current(), factory, params);
    }

    /**
     * @param agent   the agent to work through
     * @param factory builds one worker's local optimizer from its parameters, e.g.
     *                {@code params -> new SGD(params, 0.05)}
     * @param params  the parameters to optimize, anywhere in the group
     * @throws dev.ferry.rpc.RpcException the first owner's failure to build its optimizer (the
     *                                    factory's remote error); the optimizers other owners built
     *                                    are released
     */
    public DistributedOptimizer(RpcAgent agent, RpcFunction1<List<Tensor>, ? extends Optimizer> factory,
                                List<RRef<Tensor>> params) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(factory, "factory");
        if (params.isEmpty()) {
            throw new IllegalArgumentException("DistributedOptimizer needs at least one parameter RRef");
        }
        Map<WorkerInfo, List<RRef<Tensor>>> byOwner = new LinkedHashMap<>();
        for (RRef<Tensor> param : params) {
            byOwner.computeIfAbsent(param.owner(), owner -> new ArrayList<>()).add(param);
        }
        List<RRef<? extends Optimizer>> built = new ArrayList<>(byOwner.size());
        try {
            for (Map.Entry<WorkerInfo, List<RRef<Tensor>>> group : byOwner.entrySet()) {
                try (RRef<List<Tensor>> locals = agent.remote(group.getKey().name(), OptimizerCalls::localValues,
                        group.getValue())) {
                    built.add(build(locals, factory));
                }
            }
            // Creation errors (a factory that throws) surface here, not at the first step.
            for (RRef<? extends Optimizer> optimizer : built) {
                optimizer.rpcSync(OptimizerCalls::ready);
            }
        } catch (RuntimeException | Error e) {
            // nobody will hold this optimizer to close it: the owners whose factories worked let theirs go now
            built.forEach(RRef::close);
            throw e;
        }
        this.optimizers = List.copyOf(built);
    }

    /** Runs {@code factory} on the owner of {@code locals}, over its value: the factory travels as the call's function. */
    private static <O extends Optimizer> RRef<O> build(RRef<List<Tensor>> locals, RpcFunction1<List<Tensor>, O> factory) {
        return locals.remote(factory);
    }

    /** One step on every owner with its gradients of distributed autograd context {@code contextId}. */
    public void step(long contextId) {
        List<RpcFuture<Boolean>> steps = new ArrayList<>(optimizers.size());
        for (RRef<? extends Optimizer> optimizer : optimizers) {
            steps.add(optimizer.rpcAsync(OptimizerCalls::step, contextId));
        }
        if (!RpcFuture.waitAll(steps).contains(Boolean.TRUE)) {
            reportNoGradients(contextId);
        }
    }

    /**
     * PyTorch steps on in silence; the usual cause is a forward pass run before the context was
     * opened, so the loss looks trained and never falls. Said once at WARN, then at DEBUG.
     */
    private void reportNoGradients(long contextId) {
        String message = "DistributedOptimizer.step: no parameter on " + owners().stream().map(WorkerInfo::name).toList()
                + " had a gradient in distributed autograd context " + contextId + ", so nothing was updated; run"
                + " the forward pass inside the context whose id you step with (backward(...) and step(context.id()))";
        if (warnedNoGradients.compareAndSet(false, true)) {
            log.warn(message);
        } else {
            log.debug(message);
        }
    }

    /** The workers holding a local optimizer, in the order of the parameters given. */
    public List<WorkerInfo> owners() {
        return optimizers.stream().map(RRef::owner).toList();
    }

    @Override
    public void close() {
        optimizers.forEach(RRef::close);
    }
}
