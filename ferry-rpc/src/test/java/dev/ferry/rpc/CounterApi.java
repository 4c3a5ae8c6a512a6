package dev.ferry.rpc;

import java.util.concurrent.CompletionStage;

/** The interface RRef proxies use in tests. */
public interface CounterApi {
    int add(int delta);

    int value();

    @AsyncExecution
    CompletionStage<Integer> addLater(int delta);
}
