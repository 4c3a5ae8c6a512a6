package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.RRef;

/**
 * Creates {@link RRef} handles for the protocol. {@code RRef} hands its package-private
 * constructors over once, when it is initialized (the JDK's "shared secrets" pattern), so the
 * public class keeps no public constructor for internal state.
 */
public final class RRefFactory {
    /** Implemented by {@link RRef}. */
    public interface Access {
        RRef<?> owner(RRefContext context, OwnerState state);

        RRef<?> user(RRefContext context, UserState state);

        Object stateOf(RRef<?> rref);

        RRefContext contextOf(RRef<?> rref);
    }

    private static volatile Access access;

    private RRefFactory() {
    }

    public static void setAccess(Access value) {
        access = value;
    }

    static Access access() {
        Access current = access;
        if (current == null) {
            try {
                Class.forName(RRef.class.getName(), true, RRef.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            current = access;
        }
        return current;
    }
}
