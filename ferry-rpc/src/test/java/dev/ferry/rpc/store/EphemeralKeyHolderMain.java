package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;

/**
 * A process that opens a store by init method URL, sets one ephemeral key, says {@value #READY}
 * and waits to be killed: {@link AbstractSessionStoreContractTest} checks the key dies with it. It
 * also ends when its standard input closes, so it never outlives the test JVM.
 */
public final class EphemeralKeyHolderMain {
    static final String READY = "ephemeral key set";

    private EphemeralKeyHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        RendezvousResult joined = Rendezvous.builder().initMethod(args[0]).rank(0).worldSize(1)
                .timeout(Duration.ofSeconds(30)).build().connect();
        joined.store().setEphemeral(args[1], "holder".getBytes(UTF_8));
        System.out.println(READY);
        System.out.flush();
        while (System.in.read() >= 0) {
            // killed by the test long before its input ends
        }
        joined.close();
    }
}
