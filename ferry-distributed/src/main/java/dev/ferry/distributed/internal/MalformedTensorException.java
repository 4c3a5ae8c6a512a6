package dev.ferry.distributed.internal;

/**
 * A tensor in a message that cannot be what it claims (unknown dtype, a layout reaching outside its
 * storage, grad on integers). The codec turns it into an {@code RpcException} with code
 * {@code SERIALIZATION_ERROR} for the call that carried it.
 */
public final class MalformedTensorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MalformedTensorException(String message) {
        super("malformed tensor in message: " + message);
    }
}
