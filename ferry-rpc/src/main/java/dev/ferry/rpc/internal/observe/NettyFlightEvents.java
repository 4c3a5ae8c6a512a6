package dev.ferry.rpc.internal.observe;

import jdk.jfr.FlightRecorder;

/**
 * Keeps Netty's own Flight Recorder events (its buffer allocator's) from loading the recorder in a
 * JVM that records nothing: Netty, by default, initializes one of those event classes at its first
 * buffer chunk whenever the JDK has a Flight Recorder, and the first event class initialized loads
 * the recorder's whole metadata, ~60 ms of CPU plus the JIT's compiles of what that ran, in every
 * worker's start-up (with Ferry's call event doing the same, the compiles fell into W1's idle probe
 * right after init: 1.1-1.9 % of a core instead of 0.3-0.6 %). Ferry's own events wait for a
 * recorder in the same way ({@link CallEvents}). The launcher's JVM flags pass the property already;
 * this covers an application that embeds Ferry without the launcher.
 *
 * <p>So, before an agent first uses Netty, this sets {@code io.netty.jfr.enabled=false} unless the
 * property is set already (either way: the application's choice stands) or the Flight Recorder is
 * initialized (a recording runs, or is about to). Netty reads the property once, when it first
 * initializes: in a JVM that used Netty before its first agent this changes nothing. To keep Netty's
 * allocator events for a recording started later ({@code jcmd JFR.start}), pass
 * {@code -Dio.netty.jfr.enabled=true}.
 */
public final class NettyFlightEvents {
    /** Netty's switch for its Flight Recorder events (read once, by {@code PlatformDependent}). */
    public static final String PROPERTY = "io.netty.jfr.enabled";

    private NettyFlightEvents() {
    }

    /** Turns Netty's events off for this JVM unless the application chose or a recorder runs. */
    public static void offUnlessWanted() {
        if (System.getProperty(PROPERTY) == null && !FlightRecorder.isInitialized()) {
            System.setProperty(PROPERTY, "false");
        }
    }
}
