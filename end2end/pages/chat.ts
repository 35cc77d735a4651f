import { expect, type Locator, type Page } from "@playwright/test";

/** The chat page, as a reader uses it: by roles and labels. */
export class ChatPage {
  constructor(readonly page: Page) {}

  /** Opens the page and waits until hydration made it interactive. */
  async goto(baseUrl = "") {
    await this.page.goto(`${baseUrl}/`);
    await expect(this.page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  }

  composer(): Locator {
    return this.page.getByRole("textbox", { name: "Message" });
  }

  async send(text: string) {
    await this.composer().fill(text);
    await this.composer().press("Enter");
  }

  assistantBubbles(): Locator {
    return this.page.getByRole("article", { name: "Message from the assistant" });
  }

  lastAssistant(): Locator {
    return this.assistantBubbles().last();
  }

  userBubbles(): Locator {
    return this.page.getByRole("article", { name: "Message from you" });
  }

  thinkingBlocks(bubble: Locator = this.lastAssistant()): Locator {
    return bubble.locator("details.thinking");
  }

  answer(bubble: Locator = this.lastAssistant()): Locator {
    return bubble.locator(".answer");
  }

  stopButton(): Locator {
    return this.page.getByRole("button", { name: "Stop generating" });
  }

  sendButton(): Locator {
    return this.page.getByRole("button", { name: "Send" });
  }

  /** Resolves once the last assistant turn stopped streaming. */
  async waitForTurnEnd(bubble: Locator = this.lastAssistant()) {
    await expect(bubble).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
  }
}
