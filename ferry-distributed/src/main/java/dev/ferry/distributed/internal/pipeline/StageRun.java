package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.CurrentContext;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Module;

import java.util.HashMap;
import java.util.Map;

/**
 * One stage's part of one pipeline step, on the stage's worker: it runs the stage's actions in the
 * plan's order, each as soon as what it needs has arrived (a micro-batch's input for a forward pass,
 * the gradient of its output for a backward pass), and sends on what it produces. Nothing waits: an
 * arrival runs what it makes runnable on the thread that brought it, and one thread at a time runs
 * this stage's actions (the others leave their arrival and go).
 *
 * <pre>
 *   input m ──▶ F(m): x = input (a leaf that requires grad), y = module(x); hold (x, y) ──▶ y to the next stage
 *   dy ──────▶ B(m): backward from y with dy (parameters' gradients into the autograd context),
 *              drop (x, y) ──▶ dx to the previous stage
 * </pre>
 *
 * <p>Forward and backward passes run with the step's distributed autograd context bound, so a
 * module that calls other workers itself is recorded as usual. The first failure ends the run; what
 * arrives afterwards is dropped. Thread-safe.
 */
final class StageRun {
    private record Held(Tensor input, Tensor output) {
    }

    private final StagePlan plan;
    private final int[] order;
    private final Module module;
    private final ContextState context;
    private final StageHost host;
    private final Map<Integer, Tensor> inputs = new HashMap<>();
    private final Map<Integer, Tensor> gradients = new HashMap<>();
    private final Map<Integer, Held> held = new HashMap<>();
    /** Completes with the most micro-batches held at once, or with the run's failure. */
    private final RpcFuture<Integer> done = new RpcFuture<>();
    private int cursor;
    private int peak;
    private boolean running;
    private boolean over;

    StageRun(StagePlan plan, Module module, ContextState context, StageHost host) {
        this.plan = plan;
        this.order = plan.order();
        this.module = module;
        this.context = context;
        this.host = host;
    }

    RpcFuture<Integer> done() {
        return done;
    }

    void input(int microBatch, Tensor x) {
        arrived(inputs, microBatch, x);
    }

    void gradient(int microBatch, Tensor dy) {
        arrived(gradients, microBatch, dy);
    }

    private void arrived(Map<Integer, Tensor> waiting, int microBatch, Tensor value) {
        if (microBatch < 0 || microBatch >= order.length / 2) {
            fail(new IllegalArgumentException("stage " + plan.stage() + " got micro-batch " + microBatch + " of a step"
                    + " with " + order.length / 2));
            return;
        }
        synchronized (this) {
            if (over) {
                return;
            }
            waiting.put(microBatch, value);
        }
        drain();
    }

    /** Ends the run with {@code failure} (if it is not over) and drops what it holds. */
    void fail(Throwable failure) {
        synchronized (this) {
            if (over) {
                return;
            }
            over = true;
            inputs.clear();
            gradients.clear();
            held.clear();
        }
        done.setException(failure);
    }

    private void drain() {
        while (true) {
            int action;
            Tensor operand;
            synchronized (this) {
                if (running || over || cursor == order.length) {
                    return;
                }
                action = order[cursor];
                Map<Integer, Tensor> waiting = ScheduleOrder.isForward(action) ? inputs : gradients;
                operand = waiting.remove(ScheduleOrder.microBatch(action));
                if (operand == null) {
                    return;
                }
                cursor++;
                running = true;
            }
            try (CallInterceptor.Scope bound = CurrentContext.bind(context)) {
                if (ScheduleOrder.isForward(action)) {
                    forward(ScheduleOrder.microBatch(action), operand);
                } else {
                    backward(ScheduleOrder.microBatch(action), operand);
                }
            } catch (RuntimeException | Error e) {
                fail(new IllegalStateException("the " + (ScheduleOrder.isForward(action) ? "forward" : "backward")
                        + " pass of micro-batch " + ScheduleOrder.microBatch(action) + " failed: " + e, e));
                return;
            } finally {
                synchronized (this) {
                    running = false;
                }
            }
            if (finished()) {
                done.setResult(peak);
                return;
            }
        }
    }

    private synchronized boolean finished() {
        if (over || cursor < order.length) {
            return false;
        }
        over = true;
        return true;
    }

    private void forward(int microBatch, Tensor received) {
        Tensor x = plan.stage() == 0 ? received : received.requiresGrad_(true);
        Tensor y = module.forward(x);
        synchronized (this) {
            held.put(microBatch, new Held(x, y));
            peak = Math.max(peak, held.size());
        }
        host.sendOutput(plan, microBatch, y.detach(), this::fail);
    }

    private void backward(int microBatch, Tensor dy) {
        Held h;
        synchronized (this) {
            h = held.remove(microBatch);
        }
        Tensor input = plan.stage() == 0 ? null : h.input();
        Tensor dx = h.output().requiresGrad() ? context.backwardFrom(h.output(), dy, input) : null;
        if (input != null) {
            host.sendInputGradient(plan, microBatch, dx != null ? dx : Tensors.zerosLike(input), this::fail);
        }
    }
}
