package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.tools.ToolProvider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Calls by name: only a name and values travel, bound to the parameters by position and by name. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallsByNameTest {
    private LocalCluster cluster;
    private RpcAgent caller;
    private final Counter counter = new Counter(100);

    public static double scale(double x, double factor) {
        return x * factor;
    }

    public static String greet(String who, String greeting, int times) {
        return (greeting + " " + who + " ").repeat(times).strip();
    }

    /** A record a caller without this class sends as a map of its components. */
    public record Box(String label, double width, Size size, List<Integer> marks) {
        public Box {
            if (width < 0) {
                throw new IllegalArgumentException("a box cannot be " + width + " wide");
            }
        }
    }

    public record Size(int rows, int columns) {
    }

    public static String describe(Box box, List<Size> more, Map<String, Size> named) {
        return box + " " + more + " " + named;
    }

    public static int total(List<Integer> values) {
        return values.stream().mapToInt(Integer::intValue).sum();
    }

    @AsyncExecution
    public static RpcFuture<Integer> later(int x) {
        return RpcFuture.completed(x + 1);
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2);
        caller = cluster.agent(0);
        RpcAgent callee = cluster.agent(1);
        callee.register("scale", CallsByNameTest::scale, Map.of("factor", 2.0));
        callee.register("greet", CallsByNameTest::greet, Map.of("greeting", "hello", "times", 1));
        callee.register("later", CallsByNameTest::later);
        callee.register("count", counter::add);
        callee.register("describe", CallsByNameTest::describe, Map.of("more", List.of(), "named", Map.of()));
        callee.register("total", CallsByNameTest::total);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private static void assertInvalid(Runnable call, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT)).hasMessageContaining(message);
    }

    @Test
    void positionalKeywordAndDefaultArgumentsBindAsInPython() {
        assertThat(caller.rpcSync("worker1", "scale", List.of(3.0), Map.of())).isEqualTo(6.0);
        assertThat(caller.rpcSync("worker1", "scale", List.of(3.0, 4.0), Map.of())).isEqualTo(12.0);
        assertThat(caller.rpcSync("worker1", "scale", List.of(), Map.of("factor", 3.0, "x", 2.0))).isEqualTo(6.0);
        assertThat(caller.rpcSync("worker1", "greet", List.of("ferry"), Map.of("times", 2)))
                .isEqualTo("hello ferry hello ferry");
        assertThat(caller.rpcSync("worker1", "greet", List.of("you", "hi"), Map.of())).isEqualTo("hi you");
    }

    @Test
    void numbersOfAnotherKindFitWhenTheirValueDoes() {
        assertThat(caller.rpcSync("worker1", "scale", List.of(3), Map.of("factor", 2L))).isEqualTo(6.0);
        assertThat(caller.rpcSync("worker1", "greet", List.of("x"), Map.of("times", 2.0))).isEqualTo("hello x hello x");
        assertInvalid(() -> caller.rpcSync("worker1", "greet", List.of("x"), Map.of("times", 2.5)),
                "greet() argument 'times' must be int, not java.lang.Double 2.5");
    }

    /**
     * What a caller without the callee's classes sends for a record: a map of its components, as a
     * JSON object; and collections are checked element by element against their declared type.
     */
    @Test
    void recordsComeAsMapsOfTheirComponentsAndElementsFitTheirDeclaredType() {
        Map<String, Object> box = Map.of("label", "crate", "width", 2, "size", Map.of("rows", 3L, "columns", 4.0),
                "marks", List.of(1L, 2L));
        assertThat(caller.rpcSync("worker1", "describe", List.of(box),
                Map.of("more", List.of(Map.of("rows", 1, "columns", 1)), "named", Map.of("lid", Map.of("rows", 0, "columns", 2)))))
                .isEqualTo("Box[label=crate, width=2.0, size=Size[rows=3, columns=4], marks=[1, 2]] [Size[rows=1, columns=1]]"
                        + " {lid=Size[rows=0, columns=2]}");
        // the record itself still fits, by a caller that has the class
        assertThat(caller.rpcSync("worker1", "describe", List.of(new Box("b", 1, new Size(1, 2), List.of())), Map.of()))
                .isEqualTo("Box[label=b, width=1.0, size=Size[rows=1, columns=2], marks=[]] [] {}");
        assertThat(caller.rpcSync("worker1", "total", List.of(List.of(1, 2L, 3.0)), Map.of())).isEqualTo(6);

        assertInvalid(() -> caller.rpcSync("worker1", "total", List.of(List.of(1, "two")), Map.of()),
                "total() argument 'values[1]' must be java.lang.Integer, not java.lang.String two");
        Map<String, Object> size = Map.of("rows", 1);
        assertInvalid(() -> caller.rpcSync("worker1", "describe", List.of(Map.of("label", "x", "width", 1, "size", size,
                        "marks", List.of())), Map.of()),
                "describe() argument 'box.size' is missing component 'columns' of dev.ferry.rpc.CallsByNameTest$Size [rows, columns]");
        assertInvalid(() -> caller.rpcSync("worker1", "describe", List.of(Map.of("label", "x", "width", 1, "depth", 3)), Map.of()),
                "describe() argument 'box' has no component 'depth': dev.ferry.rpc.CallsByNameTest$Box has [label, width, size, marks]");
        assertInvalid(() -> caller.rpcSync("worker1", "describe", List.of(Map.of("label", "x", "width", 1,
                        "size", Map.of("rows", "one", "columns", 1), "marks", List.of())), Map.of()),
                "describe() argument 'box.size.rows' must be int, not java.lang.String one");
        assertInvalid(() -> caller.rpcSync("worker1", "describe", List.of(Map.of("label", "x", "width", -1,
                        "size", Map.of("rows", 1, "columns", 1), "marks", List.of())), Map.of()),
                "describe() argument 'box': Box's constructor refused");
    }

    @Test
    void everyCallKindAndAnAsyncFunction() {
        assertThat(caller.rpcAsync("worker1", "scale", List.of(5.0), Map.of()).await()).isEqualTo(10.0);
        RRef<Object> kept = caller.remote("worker1", "scale", List.of(1.5), Map.of());
        assertThat(kept.toHere()).isEqualTo(3.0);
        assertThat(caller.rpcSync("worker1", "later", List.of(41), Map.of())).isEqualTo(42);
        assertThat(caller.to(1).rpcSync("later", List.of(), Map.of("x", 1))).isEqualTo(2);
    }

    @Test
    void aMethodBoundToItsReceiverRunsOnThatObject() {
        int before = counter.value();
        assertThat(caller.rpcSync("worker1", "count", List.of(), Map.of("delta", 5))).isEqualTo(before + 5);
        assertThat(counter.value()).isEqualTo(before + 5);
    }

    @Test
    void badArgumentsAreNamedInTheError() {
        assertInvalid(() -> caller.rpcSync("worker1", "scale", List.of(), Map.of()), "scale() missing 1 required argument: 'x'");
        assertInvalid(() -> caller.rpcSync("worker1", "greet", List.of(), Map.of("times", 1)),
                "greet() missing 1 required argument: 'who'");
        assertInvalid(() -> caller.rpcSync("worker1", "scale", List.of(1.0), Map.of("y", 2.0)),
                "scale() got an unexpected keyword argument 'y'; its parameters are [x, factor]");
        assertInvalid(() -> caller.rpcSync("worker1", "scale", List.of(1.0), Map.of("x", 2.0)),
                "scale() got multiple values for argument 'x'");
        assertInvalid(() -> caller.rpcSync("worker1", "scale", List.of(1.0, 2.0, 3.0), Map.of()),
                "scale() takes 2 positional arguments but 3 were given");
        assertInvalid(() -> caller.rpcSync("worker1", "scale", List.of("three"), Map.of()),
                "scale() argument 'x' must be double, not java.lang.String three");
    }

    @Test
    void aNameNothingIsRegisteredAsIsAnUnknownFunction() {
        assertThatThrownBy(() -> caller.rpcSync("worker1", "nope", List.of(), Map.of()))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION))
                .hasMessageContaining("no function is registered as 'nope' on worker1; registered: [count, describe, greet, later, scale, total]");
    }

    @Test
    void aFunctionCompiledWithoutParameterNamesIsRefusedSayingHowToCompileIt(@TempDir Path dir) throws Exception {
        // A class compiled here without -parameters (this module's own are compiled with it),
        // registering its own method as a program would.
        Path source = dir.resolve("compiled/elsewhere/NoNames.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, """
                package compiled.elsewhere;

                public final class NoNames {
                    public static double scale(double x, double factor) {
                        return x * factor;
                    }

                    public static void register(dev.ferry.rpc.RpcAgent agent) {
                        agent.register("unnamed", NoNames::scale);
                    }
                }
                """);
        String ferry = Path.of(RpcAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        int status = ToolProvider.getSystemJavaCompiler().run(null, null, null,
                "-d", dir.toString(), "-cp", ferry, source.toString());
        assertThat(status).as("javac's exit status").isZero();

        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            Class<?> noNames = loader.loadClass("compiled.elsewhere.NoNames");
            assertThat(noNames.getMethod("scale", double.class, double.class).getParameters()[0].isNamePresent()).isFalse();
            Method register = noNames.getMethod("register", RpcAgent.class);

            assertThatThrownBy(() -> register.invoke(null, cluster.agent(1)))
                    .isInstanceOf(InvocationTargetException.class)
                    .cause()
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                    .hasMessage("cannot register NoNames::scale as 'unnamed': its parameter names are not in its class"
                            + " file; compile it with javac -parameters (Maven: <parameters>true</parameters>)");
        }
        assertThatThrownBy(() -> caller.rpcSync("worker1", "unnamed", List.of(1.0, 2.0), Map.of()))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION));
    }

    @Test
    void registrationChecksItsNameAndDefaults() {
        RpcAgent callee = cluster.agent(1);
        assertInvalid(() -> callee.register("scale", CallsByNameTest::scale), "worker1 already has a function registered as 'scale'");
        assertInvalid(() -> callee.register("scale2", CallsByNameTest::scale, Map.of("y", 1.0)),
                "a default is given for 'y', which is not a parameter of CallsByNameTest::scale[x, factor]");
        assertInvalid(() -> callee.register("scale3", CallsByNameTest::scale, Map.of("factor", "two")),
                "scale3() argument 'factor' must be double, not java.lang.String two");
        // this class is compiled with -parameters, and still: it was told to compile with -parameters
        assertInvalid(() -> callee.register("inline", (RpcFunction1<Double, Double>) (Double x) -> x + 1),
                "it is a lambda, whose parameter names javac does not keep (not even with -parameters);"
                        + " register a method reference to a named method");
    }
}
