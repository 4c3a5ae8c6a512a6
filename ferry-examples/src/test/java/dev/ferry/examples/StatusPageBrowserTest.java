package dev.ferry.examples;

import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The launcher's status page of a running 3-worker cluster, in a real headless Chromium driven by
 * Selenium: every worker appears, the calls/s chart moves while calls run, a killed worker shows as
 * gone. Screenshots go to {@code target/status-page*.png}, which CI keeps.
 */
@Timeout(180)
class StatusPageBrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void theStatusPageShowsEveryWorkerLiveCallsAndAKilledWorkerAsGone(@TempDir Path profile) throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run installs them)");
        WorkerGroupSpec spec = WorkerGroupSpec.builder()
                .nproc(3)
                .mainClass(StatusLoadMain.class.getName())
                .classpath(System.getProperty("java.class.path"))
                .statusPort(0)
                .build();
        try (WorkerGroup group = new WorkerGroup(spec).start()) {
            URI page = group.statusPage().orElseThrow();
            assertThat(page.getHost()).isEqualTo("127.0.0.1");
            WebDriver browser = chromium(profile);
            try {
                browser.get(page.toString());
                WebDriverWait wait = new WebDriverWait(browser, WAIT);
                assertThat(browser.getTitle()).isEqualTo("Ferry cluster");

                // Every worker appears, reporting, under its name.
                for (int rank = 0; rank < 3; rank++) {
                    int r = rank;
                    wait.until(d -> "reporting".equals(rowState(d, r)) && rowText(d, r).contains("worker" + r));
                }
                // The calls/s chart gains points and shows calls flowing.
                int before = points(browser, "calls-chart");
                wait.until(d -> points(d, "calls-chart") >= before + 4
                        && Double.parseDouble(attribute(d, "calls-chart", "data-last-total")) > 0);
                wait.until(d -> points(d, "series-chart") > 0); // the reported loss
                wait.until(d -> script(d, "return document.querySelector('#errors tbody').textContent")
                        .contains("java.lang.IllegalStateException"));
                save(browser, "status-page.png");

                // A killed worker shows as gone; the others keep reporting.
                group.process(2).destroyForcibly().waitFor();
                wait.until(d -> "gone".equals(rowState(d, 2)));
                assertThat(rowText(browser, 2)).contains("gone");
                assertThat(rowState(browser, 0)).isEqualTo("reporting");
                // Still live: calls flow again to the workers that are left.
                int after = points(browser, "calls-chart");
                wait.until(d -> points(d, "calls-chart") > after
                        && Double.parseDouble(attribute(d, "calls-chart", "data-last-total")) > 0);
                save(browser, "status-page-worker-gone.png");
            } finally {
                browser.quit();
            }
        }
    }

    private static WebDriver chromium(Path profile) {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // As the machine notes say: headless, no sandbox (root), and none of Chromium's own
        // background connections, which this machine's closed network refuses.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--window-size=1400,1300", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        return new ChromeDriver(service, options);
    }

    // The page redraws its tables twice a second: read them in one script each, never through an
    // element found earlier (it may be gone by the next read).
    private static String script(WebDriver browser, String script) {
        Object value = ((JavascriptExecutor) browser).executeScript(script);
        return value == null ? "" : value.toString();
    }

    private static String rowState(WebDriver browser, int rank) {
        return script(browser, "const row = document.querySelector(\"#workers tbody tr[data-rank='" + rank
                + "']\"); return row ? row.dataset.state : null");
    }

    private static String rowText(WebDriver browser, int rank) {
        return script(browser, "const row = document.querySelector(\"#workers tbody tr[data-rank='" + rank
                + "']\"); return row ? row.textContent : null");
    }

    private static String attribute(WebDriver browser, String id, String name) {
        String value = script(browser, "return document.getElementById('" + id + "').getAttribute('" + name + "')");
        return value.isEmpty() ? "0" : value;
    }

    private static int points(WebDriver browser, String id) {
        return Integer.parseInt(attribute(browser, id, "data-points"));
    }

    private static void save(WebDriver browser, String name) throws Exception {
        File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
        Path target = Path.of("target");
        Files.createDirectories(target);
        Files.copy(shot.toPath(), target.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    }
}
