package dev.ferry.metrics;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.spi.RequestTimeline;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Binds one agent's calls and debug info to a Micrometer {@link MeterRegistry}, with names and tags
 * after Micrometer's conventions. Every meter is tagged {@code worker} (this agent's name):
 *
 * <pre>
 *   meter                       type                   tags                        measures
 *   ferry.calls.sent            Timer                  peer, function, outcome     a call this worker made, from the call to its outcome
 *   ferry.calls.sent.request    DistributionSummary    peer, function              its encoded request, bytes
 *   ferry.calls.sent.response   DistributionSummary    peer, function              its encoded answer, bytes
 *   ferry.requests.received     Timer                  peer, function, outcome     a request this worker ran, from arrival to its encoded answer
 *   ferry.requests.handler      Timer                  peer, function, outcome     the function's run
 *   ferry.requests.queue        Timer                  peer, function              the wait for a thread to run it
 *   ferry.agent.calls_sent,     Gauge                  -                           every numeric entry of the agent's debug info, under
 *   ferry.rref.num_owner_rrefs, ...                                                PyTorch's names ({@code _get_debug_info}) after "ferry."
 * </pre>
 *
 * <p>{@code peer} is the other worker of the call (the callee of a call sent, the caller of a
 * request run), {@code function} its {@code Class::method}, {@code outcome} {@code ok} or the
 * {@code RpcException} code ({@code TIMEOUT}, {@code REMOTE_ERROR}, ...) on the caller, the thrown
 * class on the callee. The timers publish percentile histograms (1 µs to 30 s), so a Prometheus
 * server computes quantiles across workers with {@code histogram_quantile}. Only the application's
 * calls count (not Ferry's own RRef and shutdown traffic), as in the agent's {@code agent.calls_*}.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * try (RpcAgentMetrics metrics = RpcAgentMetrics.of(agent);
 *      PrometheusEndpoint endpoint = PrometheusEndpoint.start(registry, 9464)) {
 *     metrics.bindTo(registry);                      // scrape http://127.0.0.1:9464/metrics
 *     ...
 * }
 * }</pre>
 *
 * <p>Per call this costs a map look-up and the registry's record (the agent's transport and
 * request threads do it); gauges read the debug info once per scrape. Closing removes the meters
 * from the registries it was bound to and stops following calls. Thread-safe.
 */
public final class RpcAgentMetrics implements MeterBinder, AutoCloseable {
    /** Put before each debug-info key to name its gauge: {@code agent.calls_sent} is {@code ferry.agent.calls_sent}. */
    static final String DEBUG_INFO_PREFIX = "ferry.";
    private final RpcAgent agent;
    private final String worker;
    private final DebugInfoSnapshot debugInfo;
    private final List<Binding> bindings = new ArrayList<>();

    private RpcAgentMetrics(RpcAgent agent) {
        this.agent = agent;
        this.worker = agent.getWorkerInfo().name();
        this.debugInfo = new DebugInfoSnapshot(agent::getDebugInfo);
    }

    /** Metrics of {@code agent}, to {@link #bindTo} one or more registries. */
    public static RpcAgentMetrics of(RpcAgent agent) {
        return new RpcAgentMetrics(Objects.requireNonNull(agent, "agent"));
    }

    /** Registers the meters with {@code registry} and starts recording the agent's calls into it. */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        CallMeters meters = new CallMeters(registry, worker);
        List<Meter> gauges = new ArrayList<>();
        for (Map.Entry<String, String> entry : agent.getDebugInfo().entrySet()) {
            if (DebugInfoSnapshot.parse(entry.getValue()) != null) {
                String key = entry.getKey();
                // under the library's prefix, as ferry.calls.sent: bare "agent.*" or "transport.*"
                // would mix with other libraries' meters in a shared registry
                gauges.add(Gauge.builder(DEBUG_INFO_PREFIX + key, debugInfo, snapshot -> snapshot.value(key))
                        .description("Ferry debug info " + key)
                        .tag(CallMeters.WORKER, worker)
                        .strongReference(true)
                        .register(registry));
            }
        }
        AutoCloseable observer = agent.addCallObserver(new Recorder(meters));
        bindings.add(new Binding(registry, meters, gauges, observer));
    }

    /** Stops recording and removes every meter this registered. */
    @Override
    public synchronized void close() {
        for (Binding binding : bindings) {
            try {
                binding.observer.close();
            } catch (Exception e) {
                // the agent's registration never throws; nothing to undo
            }
            binding.meters.removeAll();
            binding.gauges.forEach(binding.registry::remove);
        }
        bindings.clear();
    }

    private record Binding(MeterRegistry registry, CallMeters meters, List<Meter> gauges, AutoCloseable observer) {
    }

    /** Follows every call and request of the agent into one registry's meters. */
    private static final class Recorder implements CallObserver {
        private final CallMeters meters;

        Recorder(CallMeters meters) {
            this.meters = meters;
        }

        @Override
        public boolean followsCall(CallInfo call, CallHeaders headers) {
            return true;
        }

        @Override
        public void callEnded(CallTimeline call) {
            meters.sent(call);
        }

        @Override
        public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
            return true;
        }

        @Override
        public void requestEnded(RequestTimeline request) {
            meters.received(request);
        }
    }
}
