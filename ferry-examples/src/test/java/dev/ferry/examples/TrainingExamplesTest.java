package dev.ferry.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The training examples (PyTorch's RPC tutorials) on real worker JVMs: each trains, in the number of
 * steps it runs, to a loss below a stated bound, from where it started.
 */
@Timeout(150)
class TrainingExamplesTest {
    private static final Pattern RESULT = Pattern.compile(
            "(\\d+)\\|RESULT (\\S+).* loss ([0-9.]+) -> ([0-9.]+), (\\d+) steps, ([0-9.]+) steps/s");

    /** What one worker's {@link TrainingReport} said. */
    private record Report(int rank, String who, double first, double last, int steps) {
    }

    private static List<Report> reports(ExampleRun run) {
        return run.lines.stream().map(RESULT::matcher).filter(Matcher::matches)
                .map(m -> new Report(Integer.parseInt(m.group(1)), m.group(2), Double.parseDouble(m.group(3)),
                        Double.parseDouble(m.group(4)), Integer.parseInt(m.group(5))))
                .toList();
    }

    private static void assertTrained(List<Report> reports, int steps, double bound) {
        assertThat(reports).allSatisfy(r -> {
            assertThat(r.steps()).as(r.who()).isEqualTo(steps);
            assertThat(r.last()).as(r.who() + " last loss").isLessThan(bound).isLessThan(r.first());
        });
    }

    @Test
    void severalTrainersTrainOneModelThroughAnRRefToTheServer() throws Exception {
        // four trainers take turns on the model, as the class javadoc's "all trainers" promises
        ExampleRun run = ExampleRun.of(RRefParameterServer.class.getName(), 5);
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        List<Report> reports = reports(run);
        assertThat(reports).extracting(Report::rank).containsExactlyInAnyOrder(1, 2, 3, 4);
        assertTrained(reports, RRefParameterServer.STEPS, 1.2); // from ~2.4 (ten classes)
        String prefix = "0|RESULT accuracy ";
        assertThat(run.lines).anySatisfy(l -> assertThat(l).startsWith(prefix)
                .satisfies(x -> assertThat(Double.parseDouble(x.substring(prefix.length()))).isGreaterThan(0.9)));
    }

    @Test
    void aBatchUpdatingParameterServerTrainsALinearModelWithTwoTrainers() throws Exception {
        ExampleRun run = ExampleRun.of(ParameterServer.class.getName(), 3);
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        List<Report> reports = reports(run);
        assertThat(reports).extracting(Report::rank).containsExactlyInAnyOrder(1, 2);
        assertTrained(reports, ParameterServer.STEPS, 0.01);
        String prefix = "0|RESULT max weight error ";
        assertThat(run.lines).anySatisfy(l -> {
            assertThat(l).startsWith(prefix);
            String[] errors = l.substring(prefix.length()).split(", bias error ");
            assertThat(Double.parseDouble(errors[0])).isLessThan(0.02);
            assertThat(Double.parseDouble(errors[1])).isLessThan(0.02);
        });
    }

    @Test
    void anRnnWithItsEmbeddingAndDecoderOnAParameterServerLearnsItsSequences() throws Exception {
        ExampleRun run = ExampleRun.of(DistributedRnn.class.getName(), 2);
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        List<Report> reports = reports(run);
        assertThat(reports).extracting(Report::rank).containsExactly(0);
        assertTrained(reports, DistributedRnn.STEPS, 0.8); // from ~2.3 (ten tokens)
    }

    @Test
    void aModelSplitIntoTwoPipelinedShardsTrainsEndToEnd() throws Exception {
        ExampleRun run = ExampleRun.of(PipelineParallelTraining.class.getName(), 3, Map.of(), List.of("4"));
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        List<Report> reports = reports(run);
        assertThat(reports).extracting(Report::rank).containsExactly(0);
        assertTrained(reports, PipelineParallelTraining.STEPS, 1.5); // from ~2.3 (ten classes)
    }

    @Test
    void theSameShardsTrainThroughAOneForwardOneBackwardPipeline() throws Exception {
        ExampleRun run = ExampleRun.of(PipelineParallelTraining.class.getName(), 3, Map.of(), List.of("4", "1f1b"));
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        assertTrained(reports(run), PipelineParallelTraining.STEPS, 1.5);
        assertThat(run.lines).contains("0|RESULT peak activations per shard [2, 1]");
    }

    @Test
    void aModelSplitOverTwoWorkersTrainsWithDistributedAutograd() throws Exception {
        ExampleRun run = ExampleRun.of(SplitModelTraining.class.getName(), 3);
        assertThat(run.succeeded()).as(run.transcript()).isTrue();
        List<Report> reports = reports(run);
        assertThat(reports).hasSize(1).allSatisfy(r -> assertThat(r.last()).isLessThan(r.first() / 4));
    }
}
