package dev.ferry.rpc.spi;

import org.apache.fory.resolver.TypeResolver;
import org.apache.fory.serializer.Serializer;

import java.util.function.Function;

/**
 * Registration of types with Ferry's serializer (Apache Fory). Explicit ids make the encoding
 * independent of registration order: Fory's automatic ids depend on it and can silently decode
 * one class as another when two workers register in different orders.
 *
 * <p>Types need not be registered at all: unregistered classes travel by name and are checked
 * against the class policy when decoded. Registering saves bytes and pins the identity.
 */
public interface TypeRegistry {
    /** The first id available to applications; lower ids are Ferry's own. */
    int FIRST_USER_ID = 1000;

    /**
     * The first id of the range kept for Ferry's own modules built on this SPI ({@code ferry-distributed}'s
     * tensor types): ids from here to {@link #FIRST_USER_ID} are accepted only from extensions whose
     * class lives in a {@code dev.ferry} package, so an application's extension cannot take them by
     * mistake and later collide with a Ferry module on its workers' class path.
     */
    int FIRST_MODULE_ID = 900;

    /** Registers {@code type} under {@code id} (at least {@link #FIRST_USER_ID}). */
    void register(Class<?> type, int id);

    /**
     * Registers {@code type} under {@code id} with a custom serializer, built once for each Fory
     * instance Ferry uses (there is a pool of them).
     */
    void register(Class<?> type, int id, Function<TypeResolver, Serializer<?>> serializerFactory);
}
