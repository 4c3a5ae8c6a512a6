package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Dropout;
import dev.ferry.tensor.nn.Embedding;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.LSTM;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.optim.Adam;

import java.util.ArrayList;
import java.util.List;

/**
 * A recurrent language model split over two workers, after part 2 of PyTorch's tutorial "Getting
 * Started with Distributed RPC Framework" (distributed RNN with model parallelism): the embedding
 * table and the decoder live on worker1, the parameter server, as {@link RemoteModule}s; the LSTM
 * between them lives on worker0, the trainer. Each step runs inside a distributed autograd context:
 * token ids go to worker1 and come back embedded, the LSTM runs here, its outputs go to worker1 to be
 * decoded into next-token scores; the backward pass flows back through both workers and one
 * {@link DistributedOptimizer} over all parameters (the remote modules' {@code remoteParameters()}
 * and the LSTM's own) steps them where they live. The LSTM's state is carried from batch to batch and
 * cut from the graph in between (truncated backpropagation through time), as in the tutorial. The
 * optimizer is Adam where the tutorial has SGD, and the layers keep their default initialisation
 * where the tutorial draws small weights: on data with something to learn, both get there in tens
 * of steps instead of hundreds.
 *
 * <pre>
 * ./ferry run --nproc 2 dev.ferry.examples.DistributedRnn
 * </pre>
 *
 * <p><b>Data.</b> Synthetic, from fixed seeds (nothing can be downloaded; the tutorial itself feeds
 * random numbers): parallel streams of tokens where each token is the sum, modulo the vocabulary, of
 * the two before it, so predicting the next one needs the previous one remembered, which is the
 * LSTM's job.
 */
public final class DistributedRnn {
    static final int TOKENS = 10;
    static final int EMBEDDING = 16;
    static final int HIDDEN = 32;
    static final int LAYERS = 2;
    static final double DROPOUT = 0.1;
    static final int STREAMS = 8;
    static final int BPTT = 12;
    static final int STEPS = 60;
    static final double LR = 0.02;

    private DistributedRnn() {
    }

    /** The tutorial's {@code EmbeddingTable}, built on the parameter server. */
    public static final class EmbeddingTable extends Module {
        private final Dropout drop = registerModule("drop", new Dropout(DROPOUT, new Generator(11)));
        private final Embedding encoder = registerModule("encoder",
                new Embedding(TOKENS, EMBEDDING, null, new Generator(12)));

        /** Token ids {@code [seq, batch]} (int64) to vectors {@code [seq, batch, EMBEDDING]}. */
        @Override
        public Tensor forward(Tensor tokens) {
            return drop.forward(encoder.forward(tokens));
        }
    }

    /** The tutorial's {@code Decoder}, built on the parameter server. */
    public static final class Decoder extends Module {
        private final Dropout drop = registerModule("drop", new Dropout(DROPOUT, new Generator(21)));
        private final Linear decoder = registerModule("decoder", new Linear(HIDDEN, TOKENS, true, new Generator(22)));

        /** LSTM outputs {@code [seq, batch, HIDDEN]} to next-token scores {@code [seq, batch, TOKENS]}. */
        @Override
        public Tensor forward(Tensor output) {
            return decoder.forward(drop.forward(output));
        }
    }

    /** The tutorial's {@code RNNModel}, on the trainer: remote embedding and decoder, a local LSTM. */
    static final class RnnModel implements AutoCloseable {
        private final RemoteModule<EmbeddingTable> embedding;
        private final LSTM rnn = new LSTM(EMBEDDING, HIDDEN, LAYERS, DROPOUT, false, new Generator(31));
        private final RemoteModule<Decoder> decoder;

        RnnModel(String parameterServer) {
            embedding = RemoteModule.create(parameterServer, EmbeddingTable::new);
            decoder = RemoteModule.create(parameterServer, Decoder::new);
        }

        LSTM.Result forward(Tensor tokens, LSTM.State hidden) {
            Tensor embedded = embedding.forward(tokens);
            LSTM.Result out = rnn.forward(embedded, hidden);
            return new LSTM.Result(decoder.forward(out.output()), out.state());
        }

        /** Every parameter, where it lives: the tutorial's {@code parameter_rrefs}. */
        List<RRef<Tensor>> parameterRRefs() {
            List<RRef<Tensor>> params = new ArrayList<>(embedding.remoteParameters());
            rnn.parameters().forEach(p -> params.add(RRef.of(p)));
            params.addAll(decoder.remoteParameters());
            return params;
        }

        @Override
        public void close() {
            embedding.close();
            decoder.close();
        }
    }

    /** Parallel token streams, each token the sum of the two before it (modulo the vocabulary). */
    static final class Streams {
        private final long[] previous = new long[STREAMS];
        private final long[] current = new long[STREAMS];

        Streams(Generator generator) {
            long[] start = Tensors.randint(0, TOKENS, generator, 2, STREAMS).toLongArray();
            System.arraycopy(start, 0, previous, 0, STREAMS);
            System.arraycopy(start, STREAMS, current, 0, STREAMS);
        }

        /** The next {@code length + 1} tokens of every stream, {@code [length + 1, STREAMS]}; the last comes again next time. */
        Tensor next(int length) {
            long[] tokens = new long[(length + 1) * STREAMS];
            for (int t = 0; t <= length; t++) {
                for (int s = 0; s < STREAMS; s++) {
                    tokens[t * STREAMS + s] = current[s];
                    if (t < length) {
                        long after = (previous[s] + current[s]) % TOKENS;
                        previous[s] = current[s];
                        current[s] = after;
                    }
                }
            }
            return Tensors.from(tokens, length + 1, STREAMS);
        }
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                train();
            }
        } finally {
            Rpc.shutdown();
        }
    }

    private static void train() {
        TrainingReport report = new TrainingReport("worker0");
        Streams streams = new Streams(new Generator(0));
        try (RnnModel model = new RnnModel("worker1")) {
            List<RRef<Tensor>> params = model.parameterRRefs();
            try (DistributedOptimizer optimizer = new DistributedOptimizer(p -> new Adam(p, Adam.defaults().withLr(LR)), params)) {
                LSTM.State hidden = null;
                for (int step = 0; step < STEPS; step++) {
                    Tensor window = streams.next(BPTT);
                    Tensor input = window.narrow(0, 0, BPTT);
                    Tensor target = window.narrow(0, 1, BPTT).contiguous();
                    report.stepStarts();
                    try (DistAutogradContext context = DistAutograd.context()) {
                        LSTM.Result out = model.forward(input, hidden);
                        hidden = out.state().detach();
                        Tensor loss = Functional.crossEntropy(out.output().reshape(-1, TOKENS), target.reshape(-1));
                        context.backward(List.of(loss));
                        optimizer.step(context.id());
                        report.stepDone(loss.item());
                    }
                }
            } finally {
                params.forEach(RRef::close);
            }
        }
        report.print();
    }
}
