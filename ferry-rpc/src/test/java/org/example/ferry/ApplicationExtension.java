package org.example.ferry;

import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;

/** An application's extension (outside Ferry's packages) registering one type under a chosen id. */
public record ApplicationExtension(Class<?> type, int id) implements SerializationExtension {
    @Override
    public void register(TypeRegistry registry) {
        registry.register(type, id);
    }
}
