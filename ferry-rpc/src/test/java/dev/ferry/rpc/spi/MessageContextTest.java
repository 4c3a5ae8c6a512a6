package dev.ferry.rpc.spi;

import dev.ferry.rpc.testing.LocalCluster;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.serializer.Serializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Serializers see which agent moves their value, and the header entries of its message. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MessageContextTest {
    static final HeaderKey<String> NOTE = HeaderKey.ofString("test-note");
    static final List<String> SEEN = new CopyOnWriteArrayList<>();

    /** A value whose serializer reports what it saw. */
    public record Probe(String text) {
    }

    public static Probe echo(Probe probe) {
        return new Probe(probe.text() + "!");
    }

    static final class ProbeSerializer extends Serializer<Probe> {
        ProbeSerializer(Config config) {
            super(config, Probe.class);
        }

        @Override
        public void write(WriteContext write, Probe value) {
            SEEN.add("write " + describe(MessageContext.current()));
            write.writeString(value.text());
        }

        @Override
        public Probe read(ReadContext read) {
            SEEN.add("read " + describe(MessageContext.current()));
            return new Probe(read.readString());
        }

        private static String describe(MessageContext message) {
            return message == null ? "outside a message"
                    : message.agent().getWorkerInfo().name() + " " + message.headers().get(NOTE);
        }
    }

    static final class Notes implements CallInterceptor {
        @Override
        public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
            return headers.with(NOTE, "request");
        }

        @Override
        public CallHeaders beforeSendResponse(CallInfo call, Object result, CallHeaders requestHeaders,
                                              CallHeaders responseHeaders) {
            return responseHeaders.with(NOTE, "response to " + requestHeaders.get(NOTE));
        }
    }

    @Test
    void serializersSeeTheAgentAndTheHeadersOfEachMessage() {
        SEEN.clear();
        try (LocalCluster cluster = LocalCluster.start(2, b -> b
                .addInterceptor(new Notes())
                .addSerializationExtension(registry -> registry.register(Probe.class, 1000,
                        resolver -> new ProbeSerializer(resolver.getConfig()))))) {
            Probe back = cluster.agent(0).rpcSync("worker1", MessageContextTest::echo, new Probe("hi"));

            assertThat(back).isEqualTo(new Probe("hi!"));
            assertThat(SEEN).containsExactly(
                    "write worker0 request",
                    "read worker1 request",
                    "write worker1 response to request",
                    "read worker0 response to request");
        }
        assertThat(MessageContext.current()).isNull();
    }
}
