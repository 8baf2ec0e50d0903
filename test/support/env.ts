/** The environment for a child `coil`: the test's own, minus anything that would pick a real provider. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(ANTHROPIC|OPENAI|OPENROUTER|DEEPSEEK|GROQ|TOGETHER|XAI|GEMINI|CEREBRAS|MISTRAL|AZURE|AWS|CLOUD_ML|GOOGLE|CLAUDE_CODE)_/.test(
        key,
      )
    )
      delete env[key];
  }
  return { ...env, ...extra };
}
