package dev.ferry.rpc.fault;

import dev.ferry.rpc.RRef;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Functions {@link DeadOwnerRRefsTest} runs on the surviving workers (in the test's JVM). */
public final class DeadOwnerFunctions {
    /** The references a worker keeps, as an application holding them would. */
    static final List<RRef<?>> KEPT = new CopyOnWriteArrayList<>();

    private DeadOwnerFunctions() {
    }

    /** Keeps {@code rref} on this worker. */
    public static boolean keep(RRef<?> rref) {
        KEPT.add(rref);
        return true;
    }

    /** The owner's name of {@code rref}, once the request has it (its fork confirmed, or its owner gone). */
    public static String ownerOf(RRef<?> rref) {
        return rref.ownerName();
    }
}
