package dev.ferry.rpc.spi;

/**
 * Teaches Ferry's serializer about more types: gives them stable ids and custom serializers (the
 * tensor codec of {@code ferry-distributed} is one). Found by {@link java.util.ServiceLoader} or
 * given in the backend options; every worker of a group must install the same extensions.
 */
public interface SerializationExtension {
    void register(TypeRegistry registry);
}
