package dev.ferry.metrics;

import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.spi.RequestTimeline;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The per-call meters of one agent in one registry, made on first use of each peer, function and
 * outcome and kept here, so a call costs a map look-up rather than the registry's (which builds
 * an id and its tags). Thread-safe.
 */
final class CallMeters {
    static final String WORKER = "worker";
    private static final Duration MIN_EXPECTED = Duration.ofNanos(1_000);
    private static final Duration MAX_EXPECTED = Duration.ofSeconds(30);

    private final MeterRegistry registry;
    private final String worker;
    private final ConcurrentHashMap<Series, Sent> sent = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Series, Received> received = new ConcurrentHashMap<>();

    CallMeters(MeterRegistry registry, String worker) {
        this.registry = registry;
        this.worker = worker;
    }

    void sent(CallTimeline call) {
        Series series = new Series(call.info().callee().name(), call.info().function(), call.outcome());
        Sent meters = sent.computeIfAbsent(series, this::newSent);
        meters.time.record(call.totalNanos(), TimeUnit.NANOSECONDS);
        meters.request.record(call.requestBytes());
        if (call.succeeded()) {
            meters.response.record(call.responseBytes());
        }
    }

    void received(RequestTimeline request) {
        Series series = new Series(request.info().caller().name(), request.info().function(), request.outcome());
        Received meters = received.computeIfAbsent(series, this::newReceived);
        meters.time.record(request.totalNanos(), TimeUnit.NANOSECONDS);
        meters.handler.record(request.handlerNanos(), TimeUnit.NANOSECONDS);
        meters.queue.record(request.queueNanos(), TimeUnit.NANOSECONDS);
    }

    /** Removes every meter made here from the registry. */
    void removeAll() {
        sent.values().forEach(meters -> {
            registry.remove(meters.time);
            registry.remove(meters.request);
            registry.remove(meters.response);
        });
        received.values().forEach(meters -> {
            registry.remove(meters.time);
            registry.remove(meters.handler);
            registry.remove(meters.queue);
        });
        sent.clear();
        received.clear();
    }

    private Sent newSent(Series series) {
        return new Sent(
                timer("ferry.calls.sent", "Calls this worker made, from the call to its outcome", series, true),
                bytes("ferry.calls.sent.request", "Encoded requests of the calls this worker made", series),
                bytes("ferry.calls.sent.response", "Encoded answers to the calls this worker made", series));
    }

    private Received newReceived(Series series) {
        return new Received(
                timer("ferry.requests.received", "Requests this worker ran, from arrival to the encoded answer", series,
                        true),
                timer("ferry.requests.handler", "The functions' runs of the requests this worker ran", series, true),
                timer("ferry.requests.queue", "Requests' waits for a thread to run them", series, false));
    }

    private Timer timer(String name, String description, Series series, boolean withOutcome) {
        Timer.Builder builder = Timer.builder(name)
                .description(description)
                .tag(WORKER, worker)
                .tag("peer", series.peer)
                .tag("function", series.function)
                .publishPercentileHistogram()
                .minimumExpectedValue(MIN_EXPECTED)
                .maximumExpectedValue(MAX_EXPECTED);
        if (withOutcome) {
            builder.tag("outcome", series.outcome);
        }
        return builder.register(registry);
    }

    private DistributionSummary bytes(String name, String description, Series series) {
        return DistributionSummary.builder(name)
                .description(description)
                .baseUnit("bytes")
                .tag(WORKER, worker)
                .tag("peer", series.peer)
                .tag("function", series.function)
                .register(registry);
    }

    /** One set of tags. */
    private record Series(String peer, String function, String outcome) {
    }

    private record Sent(Timer time, DistributionSummary request, DistributionSummary response) {
    }

    private record Received(Timer time, Timer handler, Timer queue) {
    }
}
