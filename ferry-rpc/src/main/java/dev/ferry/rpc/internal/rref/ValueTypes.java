package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;

/**
 * The class of an RRef's value ({@code RRef.type()}, PyTorch's {@code rref._get_type()}): what the
 * owner answers, and how the asker turns the answer into a class of its own. Only the class's name
 * travels, so asking needs no serializer of the value and runs none of its code: the asker loads
 * the class without initializing it.
 */
public final class ValueTypes {
    private ValueTypes() {
    }

    /** The class of {@code value}; {@code null}'s is {@link Void} (Python's {@code NoneType}). */
    public static Class<?> of(Object value) {
        return value == null ? Void.class : value.getClass();
    }

    /** The name the owner answers for {@code value}'s class. */
    public static String nameOf(Object value) {
        return of(value).getName();
    }

    /**
     * The class {@code name} (the owner's answer) as {@code loader} finds it, not initialized.
     *
     * @throws RpcException {@link RpcException.Code#SERIALIZATION_ERROR} naming the class when
     *                      this worker cannot load it
     */
    public static Class<?> load(String name, ClassLoader loader, WorkerInfo owner, GloballyUniqueId rrefId,
                                WorkerInfo self) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new RpcException(RpcException.Code.SERIALIZATION_ERROR, "the value of RRef " + rrefId + " on "
                    + owner.name() + " is a " + name + ", a class " + self.name() + " cannot load (not on its class"
                    + " path, or a hidden class such as a lambda's): " + e, e);
        }
    }
}
