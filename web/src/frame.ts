/**
 * Draws a view at most once per animation frame, however many messages arrive: each message
 * updates the model at once and asks for a frame. A timer stands in when frames do not come (a
 * hidden tab), so the view still catches up.
 */
export class Frame {
  private asked: number | undefined;
  private messages = 0;
  private drawn: { since: number; messages: number } | undefined;

  constructor(private readonly draw: () => void) {}

  request(): void {
    this.messages++;
    if (this.asked !== undefined) return;
    this.asked = performance.now();
    requestAnimationFrame(this.flush);
    setTimeout(this.flush, 100);
  }

  private readonly flush = (): void => {
    if (this.asked === undefined) return;
    this.drawn = { since: this.asked, messages: this.messages };
    this.asked = undefined;
    this.messages = 0;
    this.draw();
  };

  /** After a commit: the batch it drew (when of the first message, how many), once; undefined for a commit of something else. */
  committed(): { since: number; messages: number } | undefined {
    const d = this.drawn;
    this.drawn = undefined;
    return d;
  }
}
