package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Flow control of the in-process transport: a paused receiver makes its sender wait, then fail. */
class LocalTransportFlowTest {
    private static final long LIMIT = 8 * 1024;

    private final List<Transport> transports = new ArrayList<>();
    private final RecordingListener events = new RecordingListener();

    @AfterEach
    void close() {
        transports.forEach(Transport::close);
    }

    private final Map<Transport, String> addresses = new HashMap<>();

    private LocalTransport start(String name) {
        ThreadFactory threads = task -> new Thread(task, "local-flow-" + name);
        LocalTransport transport = new LocalTransport(name, 1, 1 << 20, LIMIT, Duration.ofMillis(300), threads);
        transports.add(transport);
        addresses.put(transport, transport.start(events));
        return transport;
    }

    private static OutboundMessage message(long id) {
        return new OutboundMessage(MessageKind.CALL, id, CallHeaders.empty(), new EncodedPayload(new byte[1024], List.of()));
    }

    @Test
    void aPausedReceiverHoldsWhatArrivesAndItsSenderWaitsThenFails() throws Exception {
        LocalTransport server = start("server");
        LocalTransport client = start("client");
        PeerChannel toServer = client.connect(addresses.get(server)).get(10, TimeUnit.SECONDS);
        PeerChannel atServer = events.accepted();
        atServer.pauseReading(true);

        List<Throwable> failures = new ArrayList<>();
        int sent = 0;
        RpcException full = null;
        while (full == null && sent < 1_000) {
            int id = sent;
            full = catchThrowableOfType(RpcException.class, () -> toServer.send(message(id), Delivery.UNORDERED, failures::add));
            if (full == null) {
                sent++;
            }
        }
        assertThat(full).as("a send that found the queue full for the whole timeout").isNotNull();
        assertThat(full.code()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThat(full.getMessage()).contains("stayed above " + LIMIT + " bytes");
        assertThat(sent).as("frames accepted before the sender had to wait").isBetween(1, (int) (LIMIT / 1024) + 1);
        assertThat(events.messages).as("nothing is taken in while paused").isEmpty();

        atServer.pauseReading(false);
        for (int i = 0; i < sent; i++) {
            assertThat(events.message().id()).isEqualTo(i);
        }
        toServer.send(message(sent), Delivery.UNORDERED, failures::add); // room again: no wait
        assertThat(events.message().id()).isEqualTo(sent);
        assertThat(failures).isEmpty();
    }
}
