"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";

/**
 * Re-renders the page's server components every `seconds` while the tab is visible, keeping
 * scroll position and form inputs. A checkbox pauses it.
 */
export function LiveRefresh({ seconds }: { seconds: number }) {
  const router = useRouter();
  const [on, setOn] = useState(true);
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") router.refresh();
    }, seconds * 1000);
    return () => clearInterval(timer);
  }, [on, seconds, router]);
  return (
    <label className="live">
      <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} />
      <span>Refresh every {seconds} s</span>
    </label>
  );
}
