package dev.ferry.rpc.internal.observe;

import jdk.jfr.FlightRecorder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Netty's Flight Recorder events stay as the application set them, and on while a recorder runs.
 * (Off where neither holds: {@code FlightRecorderEventsTest}, in a fresh JVM.) Netty read the
 * property long before these tests, so changing it here changes nothing else.
 */
class NettyFlightEventsTest {
    private String saved;

    @BeforeEach
    void save() {
        saved = System.getProperty(NettyFlightEvents.PROPERTY);
    }

    @AfterEach
    void restore() {
        if (saved == null) {
            System.clearProperty(NettyFlightEvents.PROPERTY);
        } else {
            System.setProperty(NettyFlightEvents.PROPERTY, saved);
        }
    }

    @Test
    void theApplicationsChoiceStands() {
        System.setProperty(NettyFlightEvents.PROPERTY, "true");
        NettyFlightEvents.offUnlessWanted();
        assertThat(System.getProperty(NettyFlightEvents.PROPERTY)).isEqualTo("true");
    }

    @Test
    void aRunningRecorderKeepsThemOn() {
        System.clearProperty(NettyFlightEvents.PROPERTY);
        FlightRecorder.getFlightRecorder(); // initializes it, as a recording would
        NettyFlightEvents.offUnlessWanted();
        assertThat(System.getProperty(NettyFlightEvents.PROPERTY)).isNull();
    }
}
