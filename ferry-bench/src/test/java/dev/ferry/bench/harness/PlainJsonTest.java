package dev.ferry.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlainJsonTest {

  private static final ObjectMapper JACKSON = new ObjectMapper();

  private static Map<String, Object> sample() {
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("calls_per_s", 123456.5);
    inner.put("n", 20000);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("w64", inner);
    m.put("label", "a \"quoted\"\\ line\nnext\u0001");
    m.put("list", List.of(1L, 2.5, "x"));
    m.put("empty", Map.of());
    m.put("nan", Double.NaN);
    m.put("flag", true);
    m.put("nothing", null);
    return m;
  }

  @Test
  void aResultLineIsOneLineOfJsonThatJacksonReadsBack() throws Exception {
    String line = PlainJson.writeLine(sample());
    assertThat(line).doesNotContain("\n");
    Map<String, Object> back = JACKSON.readValue(line, new TypeReference<>() {});
    assertThat(back.get("w64")).isEqualTo(Map.of("calls_per_s", 123456.5, "n", 20000));
    assertThat(back.get("label")).isEqualTo("a \"quoted\"\\ line\nnext\u0001");
    assertThat(back.get("list")).isEqualTo(List.of(1, 2.5, "x"));
    assertThat(back.get("empty")).isEqualTo(Map.of());
    assertThat(back).containsEntry("nan", null).containsEntry("flag", true).containsEntry("nothing", null);
  }

  @Test
  void theIndentedFormReadsBackTheSame() throws Exception {
    Map<String, Object> oneLine = JACKSON.readValue(PlainJson.writeLine(sample()), new TypeReference<>() {});
    Map<String, Object> indented = JACKSON.readValue(PlainJson.write(sample()), new TypeReference<>() {});
    assertThat(indented).isEqualTo(oneLine);
  }
}
