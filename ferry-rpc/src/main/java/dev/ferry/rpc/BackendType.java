package dev.ferry.rpc;

import java.util.Objects;

/**
 * Names an RPC backend, as PyTorch's {@code BackendType} does. Ferry's built-in backend is
 * {@link #NETTY}: TCP through Netty, native epoll where available. {@link #TENSORPIPE} is an alias
 * of it, so code ported from PyTorch reads the same.
 */
public record BackendType(String name) {
    /** The default backend: Netty over TCP. */
    public static final BackendType NETTY = new BackendType("NETTY");
    /** PyTorch's default backend name; in Ferry the same as {@link #NETTY}. */
    public static final BackendType TENSORPIPE = NETTY;

    public BackendType {
        Objects.requireNonNull(name, "name");
    }

    @Override
    public String toString() {
        return "BackendType." + name;
    }
}
